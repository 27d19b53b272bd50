//! What a query asks and what a tool does: read or write ([`Op`]), and for
//! a change, which kind ([`Change`]). The lexicon gives words these roles;
//! the query's intent and each tool's are read from them.

/// What a query asks, or what a tool does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Op {
    /// Not known: nothing is demoted on its account.
    #[default]
    Unknown,
    Read,
    Write,
}

impl Op {
    /// A tool doing `tool` is a guessed mismatch for a query asking `self`.
    pub(crate) fn opposes(self, tool: Op) -> bool {
        matches!((self, tool), (Op::Read, Op::Write) | (Op::Write, Op::Read))
    }
}

/// The kind of change a verb makes. A query asking for one kind is a
/// guessed mismatch for a tool whose name leads with a verb of another
/// ("delete the app" and `create_app`), unless the tool's own words carry
/// the query's verb ([`Change::admits`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Change {
    /// Any change at all (`update`, `set`, `manage`, `run`): a tool named
    /// so may do what is asked, and a query asking so asks nothing in
    /// particular.
    Any,
    /// Brings something into being or out to someone: create, send,
    /// upload, invite, schedule, deploy.
    Add,
    Remove,
    /// Ends something under way: cancel, abort, terminate.
    Cancel,
    Start,
    Close,
    Restore,
    Merge,
    Move,
    Refund,
    /// Takes a copy out: download, export. Only a tool's kind: a query
    /// opening with these asks to read as often as to change.
    Export,
}

impl Change {
    /// A tool whose name leads with a verb of kind `tool` may answer a
    /// query asking for `self`.
    pub(crate) fn admits(self, tool: Change) -> bool {
        use Change::*;
        self == tool
            // An update may do any change but join two records into one
            // or pay money back.
            || (tool == Any && !matches!(self, Merge | Refund))
            || matches!(
                (self, tool),
                // Starting a run or a meeting creates one.
                (Add, Start)
                    | (Start, Add)
                    // A cancel removes.
                    | (Cancel, Remove)
                    | (Remove, Cancel)
            )
    }

    /// The kind a lexicon entry names (`change = "remove"`).
    pub(crate) fn named(name: &str) -> Option<Change> {
        use Change::*;
        Some(match name {
            "any" => Any,
            "add" => Add,
            "remove" => Remove,
            "cancel" => Cancel,
            "start" => Start,
            "close" => Close,
            "restore" => Restore,
            "merge" => Merge,
            "move" => Move,
            "refund" => Refund,
            "export" => Export,
            _ => return None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_read_and_write_oppose() {
        assert!(Op::Read.opposes(Op::Write));
        assert!(Op::Write.opposes(Op::Read));
        assert!(!Op::Write.opposes(Op::Unknown));
        assert!(!Op::Unknown.opposes(Op::Read));
        assert!(!Op::Read.opposes(Op::Read));
    }

    #[test]
    fn kinds_admit_themselves_general_changes_and_their_kin() {
        use Change::*;
        assert!(Remove.admits(Remove));
        assert!(Remove.admits(Any));
        assert!(!Remove.admits(Add));
        assert!(!Restore.admits(Add));
        assert!(Cancel.admits(Remove) && Remove.admits(Cancel));
        // An update does not join two records or pay money back.
        assert!(!Merge.admits(Any));
        assert!(!Refund.admits(Any));
    }
}
