// Package importcmd implements `twasm import`: saved outputs and native
// session logs, one run per file.
package importcmd
