// Package importcmd implements `twasm import`: saved outputs and native
// session logs, one run per file. Before the files, it settles what a
// killed sync or import left unfinished (archive.Archiver.Recover) and
// says so on stderr.
package importcmd
