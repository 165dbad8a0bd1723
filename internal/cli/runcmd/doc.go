// Package runcmd implements `twasm run begin|end`: runs with several steps
// and sub-runs driven from a shell script.
package runcmd
