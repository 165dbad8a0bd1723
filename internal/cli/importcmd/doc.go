// Package importcmd implements `twasm import`: saved outputs and native
// session logs, one run per file. Before the files, it settles what a
// killed sync or import left unfinished (archive.Archiver.Recover) and
// says so on stderr. A file that is a sub-agent's file of one of the
// provider's stores (archive.SubAgentFile) is archived as sync archives
// it (archive.Archiver.SyncSession with its session file as Parent):
// linked into its session's open run, else, since import ends every run
// at once and so never waits for the session, a run of its own named as
// the session's sub-agent.
package importcmd
