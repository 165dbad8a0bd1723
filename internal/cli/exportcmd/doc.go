// Package exportcmd implements `twasm export FORMAT RUN...`: the command
// side of package export (flag parsing, run resolution, the OTLP exporter
// set up from flags and the standard OTEL_* environment). The OTLP
// pipeline is also what `record --otlp` uses.
package exportcmd
