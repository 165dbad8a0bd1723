// Package renormalize implements `twasm renormalize RUN`: rebuild a
// transcript from its raw captures with the plugins twasm has now, into a
// new run, leaving the original untouched. An archived session's parts,
// which extend one raw capture, are rebuilt part by part as sync wrote
// them (archive.PartFilter, archive.PartShare). A child run linked at an
// agent step after it ended (a sub-agent's own file, archived by sync as a
// child run of its session's) is rebuilt from its own transcript, as a new
// child run linked in the new step, superseding the new capture's copy of
// the sub-agent where the original link superseded the original's
// (subRunLink, linkLog): a session and its rebuild count the same tokens.
// A child run such a link supersedes (a sub-agent's file first linked at
// its session's latest part, archived again at its call once the
// session's records named it) is not rebuilt (renormalizer.superseded):
// the superseding run holds all it held.
//
// A synced session's run that is still open (no run.completed: its
// session may grow) is rebuilt as it stands: the new run ends with the
// status of its latest agent step (as renormalized), which is what the
// open run states (spec §7 read from the log), and the summary says it
// was open (Summary.Open); a later sync grows the original, not the
// rebuild. A sub-agent's child run still open is ended the same way. Any
// other run without run.completed (still being recorded, or its
// recording stopped) is rebuilt and ends in error, saying so. The rebuild
// always ends (run.completed): one without it was killed while it was
// written, holds part of the original, and stands for nothing (views:
// its original is counted, whole; ls --superseded lists it).
//
// An agent step whose rebuild names no project nor working directory,
// of a run that archives a file of a store kept in each project
// directory (Aider's history: archive.SectionsStore), gets that file's
// directory as its project, with a warning naming the file: runs
// imported before import gave the plugin the project, or imported
// --whole, gain it by renormalize, their transcripts untouched.
package renormalize
