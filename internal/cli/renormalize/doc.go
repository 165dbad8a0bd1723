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
package renormalize
