// Package runtree is the one walker of a run and the child runs it links
// to. A run's step may name a child run (child_run_id: a sub-agent, a
// called workflow); the child's transcript lies beside the parent's, in
// the same directory, named by its run id. Every reader that follows those
// links (the views' tree and digests, the usage reports' ledgers, and the
// dir, html and otlp exports) follows them through this package, so the
// rules below hold for each.
//
// Model: [Walk] visits the root run, then, depth first and in the order
// the visitor lists them, each child run a visited run links to. The
// visitor owns reading a run and building what it builds (a tree node, a
// digest, a run folder, spans); [Walk] owns whether a link is followed.
// Code that must follow a link in the middle of reading its parent (the
// otlp export parents a child's spans under the step that started it;
// renormalize rebuilds a child run inside the new step that links it)
// applies the same rules with a [Tracker].
//
// Invariants:
//   - Each run is visited at most once per walk: a link to a run already
//     visited is not followed ([Cycle]), whether it closes a cycle or
//     repeats a link.
//   - At most [MaxDepth] runs deep, the root counting as depth 0: a link
//     from a run at depth MaxDepth-1 is not followed ([TooDeep]). A
//     corrupt or hostile set of files cannot make a walk unbounded.
//   - A child id is a canonical run id before it names a file ([Path]),
//     so an id read from a file cannot reach outside the directory
//     ([Invalid]).
//   - A link that is not followed (missing file, cycle, too deep, invalid
//     id, a file that cannot be opened) is reported to the visitor as a
//     [*ChildError] and the walk goes on with the rest of the tree: one
//     broken link never hides or fails the rest. Only an error of the
//     visitor's own work (a write that failed, a cancelled context) ends
//     the walk.
package runtree
