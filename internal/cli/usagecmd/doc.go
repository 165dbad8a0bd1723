// Package usagecmd is `twasm usage` (tokens and cost by day, week, month,
// session, model or provider, from the index; the report is package
// usage's) and `twasm prices` (the price table in force, and installing
// a newer one).
//
// A run whose transcript cannot be read (a named pipe where it goes, a
// file that is not a transcript) is left out of the report, which is
// still printed; each is named with why on stderr (and in --json's
// unreadable_runs), and usage exits 2, as stats does for input that
// cannot be read.
package usagecmd
