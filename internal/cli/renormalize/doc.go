// Package renormalize implements `twasm renormalize RUN`: rebuild a
// transcript from its raw captures with the plugins twasm has now, into a
// new run, leaving the original untouched. An archived session's parts,
// which extend one raw capture, are rebuilt part by part as sync wrote
// them (archive.PartFilter, archive.PartShare).
package renormalize
