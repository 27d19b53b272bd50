# syntax=docker/dockerfile:1
#
# connecta as a container image: the one binary on a distroless base,
# running as an unprivileged user. Build from the repository root:
#
#   docker build -t connecta:0.1.0 .
#
# The image holds only the gateway. Downstream MCP servers that run as stdio
# children (node, python, …) are not in it: reach them over streamable HTTP,
# or build your own image FROM this one with their runtime added.

ARG RUST_VERSION=1.95

# --- build ------------------------------------------------------------------
FROM rust:${RUST_VERSION}-slim-bookworm AS build
# The slim image has gcc but not make, which jemalloc's build runs (the
# binary's allocator). Debian's bookworm make, whatever its point release.
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends make \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /src
# The manifests and sources the binary needs; everything else is excluded by
# .dockerignore (target/, test peers, data).
COPY Cargo.toml Cargo.lock ./
COPY crates ./crates
# Cargo's registry and the target directory live in build caches, so a
# rebuild after a source change recompiles only the workspace. The binary is
# copied out of the cache mount, which does not persist into the layer.
RUN --mount=type=cache,target=/usr/local/cargo/registry \
    --mount=type=cache,target=/src/target \
    cargo build --release --locked -p connecta \
    && install -D -m 0755 target/release/connecta /out/connecta \
    && install -d /out/data

# --- runtime ----------------------------------------------------------------
# distroless/cc: glibc, libgcc, CA certificates and /etc/passwd with the
# `nonroot` user (65532), and nothing else: no shell, no package manager.
FROM gcr.io/distroless/cc-debian12:nonroot
COPY --from=build /out/connecta /usr/local/bin/connecta
# Owned by the runtime user, so a volume mounted here (which starts as a copy
# of this directory) is writable by it.
COPY --from=build --chown=65532:65532 /out/data /var/lib/connecta
# Sandbox workers are this same binary (`connecta __sandbox-worker`); they
# harden themselves (no-new-privs, rlimits, seccomp) before a program runs.
USER 65532:65532
WORKDIR /var/lib/connecta
# The data directory: the SQLite store by default (mount a volume), or only
# small generated files when `[store] url` points at PostgreSQL.
VOLUME ["/var/lib/connecta"]
EXPOSE 8787
ENTRYPOINT ["/usr/local/bin/connecta"]
# Mount a config at /etc/connecta/connecta.toml with `server.data_dir =
# "/var/lib/connecta"` (a relative one would resolve next to the config).
# `--listen` opens the port to the container's network instead of the
# loopback default; `auth.open` is refused there, so give `/mcp` tokens.
# deploy/kubernetes/ has a complete config.
CMD ["serve", "--config", "/etc/connecta/connecta.toml", "--listen", "0.0.0.0:8787"]
