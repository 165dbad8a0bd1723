// Package importcmd implements `twasm import`: saved outputs and native
// session logs, one run per file. Before the files, it settles what a
// killed sync or import left unfinished (archive.Archiver.Recover) and
// says so on stderr. A file that is a sub-agent's file of one of the
// provider's stores (archive.SubAgentFile: also a Factory Droid Task
// sub-session, whose session_start names the session beside it, and a
// Codex sub-agent's rollout, whose session_meta names its parent thread,
// the rollout of that thread id found in the store) is
// archived as sync archives it (archive.Archiver.SyncSession with its session file as Parent):
// linked into its session's open run, else, since import ends every run
// at once and so never waits for the session, a run of its own named as
// the session's sub-agent. Every file is resolved (provider, kind)
// before any is archived, so that a session file given with its
// sub-agents' files, in any order, is archived first with its run held
// open (archive.Archiver.Hold), its sub-agents' files next, linked into
// it, and its run then ended (archive.Archiver.EndHeld): the runs sync
// would make of them. The files given are completed first
// (withSessions): a session's file with its sub-agents' files on disk
// (archive.SubAgentFiles; those not given are archived only into its
// run while it is open), a sub-agent's file with its session's file when
// the archive does not know that session, so that importing a session's
// files apart, in either order, makes the runs one import makes. An
// import killed or interrupted while it holds a run leaves it noted as
// held in the ledger; the next sync or import finishes it
// (archive.Archiver.Recover). A session file in a store whose plugin reads the
// facts of its source (archive.StoreFile: Kimi's and Cursor's
// transcripts, found in the store's directory as the plugin names it)
// is archived with its facts line, as sync archives it: its run states
// the session id sync's does. The first file of a session of a tree
// store (archive.TreeFile: Factory Droid's <id>.jsonl in its store's
// layout) is archived with the session's other files the store declares,
// as sync archives it: Droid's <id>.settings.json beside it, which holds
// the session's usage and model (Droid's layout, "*/{key}.jsonl", is
// any directory's: a session file and its settings copied anywhere
// together are read together). A Task sub-session's file is read so
// too, with its own settings beside it (archive.SubAgentFile), its run
// a child run of its session's found by the session's key or, when the
// session's file was archived as a file of its own, by its path: its
// usage is sync's.
package importcmd
