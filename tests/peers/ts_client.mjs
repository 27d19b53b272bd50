// Drive a connecta gateway with the official TypeScript SDK client over
// streamable HTTP: list the tools, search, call a read-only tool, be refused
// a destructive one, and call it through call_destructive_tool.
//
//     node ts_client.mjs URL
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const EXPECTED = ["execute_code", "search_tools", "call_tool", "call_destructive_tool", "authorize_connector", "get_result", "skills"];

function check(cond, what) {
  if (!cond) {
    console.log(`FAIL: ${what}`);
    process.exit(1);
  }
}

const value = (r) => r.structuredContent ?? JSON.parse(r.content[0].text);

const client = new Client({ name: "connecta-ts-test", version: "1.0.0" });
await client.connect(new StreamableHTTPClientTransport(new URL(process.argv[2])));
check(client.getServerVersion()?.name === "connecta", "server name");

const { tools } = await client.listTools();
const names = tools.map((t) => t.name);
check(names.length === 7, `exactly seven tools: ${names}`);
for (const n of EXPECTED) check(names.includes(n), `tool ${n} missing from ${names}`);
const search = tools.find((t) => t.name === "search_tools");
check(search.annotations?.readOnlyHint === true, "search_tools is annotated read-only");
const destructive = tools.find((t) => t.name === "call_destructive_tool");
check(destructive.annotations?.destructiveHint === true, "call_destructive_tool is annotated destructive");

const found = value(await client.callTool({ name: "search_tools", arguments: { query: "search notes" } }));
check(found.tools.some((t) => t.address === "demo.search_notes"), `search: ${JSON.stringify(found.tools.map((t) => t.address))}`);

const hit = await client.callTool({ name: "call_tool", arguments: { address: "demo.search_notes", args: { query: "release" } } });
check(!hit.isError, `read-only call failed: ${JSON.stringify(hit)}`);
check(value(hit).total >= 1, `search_notes result ${JSON.stringify(value(hit))}`);

const refused = await client.callTool({ name: "call_tool", arguments: { address: "demo.create_note", args: { title: "t", body: "b" } } });
check(refused.isError === true, "create_note was not refused by call_tool");
check(value(refused).error.code === "destructive_tool_requires_approval", `refusal ${JSON.stringify(value(refused))}`);

const created = await client.callTool({
  name: "call_destructive_tool",
  arguments: { address: "demo.create_note", args: { title: "from ts", body: "hello" }, reason: "testing" },
});
check(!created.isError, `destructive call failed: ${JSON.stringify(created)}`);
check(value(created).title === "from ts", `created ${JSON.stringify(value(created))}`);

await client.close();
console.log("OK");
