// Command benchreport turns `go test -bench` output into BENCHMARKS.md:
// every figure as a ratio against a baseline measured in the same run,
// next to its goal. It also runs the command-level measurements itself
// (start-up and peak RSS of the twasm binary).
//
//	go run ./internal/tools/benchreport -in bench.out -out BENCHMARKS.md -twasm bin/twasm
//
// With -count N, each benchmark's metric is summarized by its median,
// with the min–max range. A benchmark missing from the input is reported
// as "not measured"; it is not an error. `make bench` is the intended
// caller.
package main
