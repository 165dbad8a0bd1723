// Package usagecmd is `twasm usage` (tokens and cost by day, week, month,
// session, model or provider, from the index; the report is package
// usage's) and `twasm prices` (the price table in force, and installing
// a newer one).
package usagecmd
