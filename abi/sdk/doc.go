// Package sdk is the plugin side of the twasm ABI for Go: a plugin author
// writes a per-stream [Normalizer] (one method per raw line, one at the end
// of the stream) and registers it; the SDK owns every export, decodes the
// host's batches, turns a panic into an error status, resets state between
// streams and encodes the records.
//
// A plugin is two packages: the normalizer, a plain Go package that also
// builds and runs natively (tests, fuzzing, the performance baseline, via
// [Plugin.Driver]), and a two-line wasm entry point:
//
//	package main
//
//	import (
//		"github.com/twasm/twasm/abi/sdk"
//		"example.com/myplugin"
//	)
//
//	func init() { sdk.Register(myplugin.Plugin) }
//	func main() {}
//
// built with TinyGo or with standard Go, naming the entry point's package:
//
//	tinygo build -target=wasip1 -buildmode=c-shared -opt=2 -scheduler=none -no-debug -panic=trap [-tags=twasm.boundarygc] -o p.wasm ./wasm
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -trimpath -o p.wasm ./wasm
//
// Registration happens in init because a reactor's main is never run.
//
// The bundled plugins use TinyGo: a module a tenth the size, faster to
// start and about twice as fast to run. -opt=2 optimizes for speed (the
// default is size); -scheduler=none drops asyncify, which slows every
// call, and is safe because the SDK starts no goroutine and never blocks
// (a plugin must not either); -no-debug leaves out DWARF, which the host
// would otherwise read on every start. TinyGo has no recover on
// WebAssembly: a panic is a trap whatever the flags, so where a Go build
// reports "plugin panic: ..." as a fatal status (StatusFatal), a TinyGo build traps;
// the host treats both alike (instance discarded, the call's lines
// counted as failed, the stream goes on with a fresh instance), only the
// panic's text is lost. -panic=trap drops the message TinyGo would print
// to stdout, which the sandbox discards anyway.
//
// -tags=twasm.boundarygc, with the TinyGo runtime .ci/install-tinygo
// patches, collects garbage only at the end of each export, where no Go
// frame holds a pointer the globals do not; the runtime then scans no
// stack and the compiler keeps no shadow stack of pointers, which made the
// bundled plugins about 1.7x faster (RATIONALE.md). With a
// stock TinyGo leave the tag out: the runtime ignores it and the SDK would
// collect at every call's end. Under the tag a plugin must never call
// runtime.GC itself: the runtime scans no stack, so a collection inside a
// call would free what only that call's frames hold.
//
// This is what a plugin author depends on, with abi: both import only the
// standard library and internal/wire (the tapes and the record encoding),
// so a plugin's build compiles no host (wazero, cobra,
// SQLite, OpenTelemetry); internal/testing/archtest keeps it so. The module
// path github.com/twasm/twasm is not published: point a plugin's module at
// a clone with
//
//	go mod edit -replace=github.com/twasm/twasm=../twasm
//	go mod tidy
//
// (tidy once the code imports abi/sdk) or with go work init . ../twasm.
// twasm's public packages are transcript, recorder, lifecycle, capture and
// host; a plugin author imports abi/sdk, abi, golden and, in tests,
// abi/sdk/sdktest; each plugins/<provider> package exports its
// normalizer. Everything else in the
// module is internal (README, Layout).
//
// # Strings: spans and literals
//
// A [Str] is what a record field holds. [Text] and [JSON] make one from a
// value of the current line without copying it: the host copies (and
// unescapes) the bytes natively. [S] makes a literal. A span is valid only
// during the [Normalizer.Line] call whose line it points into; emitting it
// later panics with a clear message (the host then discards the instance).
// Call [Str.Keep] to hold a value across lines.
//
// # What is valid until when
//
// Like bufio.Scanner's Bytes, what the SDK hands a normalizer aliases
// the host's input, which the next call overwrites:
//
//   - [Line].Raw, every [abi.Value] of the line ([Line.JSON]), and the
//     strings [Name] and [View] return are valid during the Line call
//     only. Compare them, switch on them, look maps up with them
//     (m[sdk.Name(v)]), write them into records at once; to keep one,
//     copy it: v.String(), strings.Clone(s), or [Str.Keep] for a record
//     field. Never store one in a field or as a map key (m[k] = x with an
//     existing key replaces the stored key with k), never keep an
//     abi.Value for a later line.
//   - A [Str] span ([Text], [JSON], [StringOf]) is valid during its Line
//     call; one written after the host's call returned panics with a
//     clear message (a stale span is detected, never read from another
//     line).
//   - A reassembled document ([Plugin].Reassemble) is valid until the
//     next one starts; a document from [Parse] as long as the bytes it
//     indexes; one from [ParseText] (the JSON a string value holds, copied
//     once) owns its copy.
//   - An [Out] writes every record into its buffer at once: a Str needs
//     to be valid only until the Out method it is passed to returns.
//
// A normalizer's own state (ids, names, texts it joins) is Go strings
// and byte slices it owns. sdktest.Test runs a plugin's golden cases
// and captures one line a call and in batches of three: a value kept
// past its call shows there. Copies are allocations, and
// allocation is what a TinyGo plugin spends its time on, so copy only
// what is kept.
//
// # Helpers
//
// [Plugin].Reassemble has the SDK reassemble JSON documents printed over
// several lines and hand each over as one line (a line of whole objects
// glued together, `}{`, is handed over as it is: [GluedObjects] splits
// it into its objects). [TrimSpace], [HasPrefix],
// [Name], [TypeName], [StringOf] and [AppendText] are the small line and
// value helpers normalizers share, [Opt] a literal for an optional field
// (unset when empty); [Out.ToolUse] writes a tool_use block and its
// tool.call at once, [Out.LatestModel] reports the model of the latest
// answer, [FinalText] joins an answer's texts into the final answer,
// [Out.UnmappedN] counts several lines of
// one unmapped type at once. [RFC3339Millis] and [RFC3339Seconds] write
// a time since 1970 as RFC 3339 in UTC, as time.Format would, without
// its layout parsing (a fifth of a TinyGo guest's time in plugins that
// date every line). [StatedExitCode], [SplitOutputHeader] and
// [HeaderExitCode] read the exit code a tool's output text states (the
// last line that starts with a label, or the header above "Output:"), so
// that every plugin makes a result whose text states a non-zero code an
// error with that exit_code (spec §4) by the same reading.
// [Hash64] hashes bytes eight a step and a [HashSet] holds such hashes,
// for a plugin that tells a record, row or text it read already without
// keeping it (inside TinyGo both cost a fraction of FNV-1a's byte steps
// and of a map[uint64]bool).
//
// # Token usage (ABI 1.5)
//
// [Usage] holds the figures a provider states, nothing guessed. A
// provider that counts every input token and states the cached part
// inside it (OpenAI, Codex, Gemini, Copilot) fills Input, CacheRead (and
// CacheWrite where it has one); one that states the uncached input apart
// from the cache read and write (Anthropic, Pi, OpenCode, Cline) builds
// its usage with [Split]. The SDK derives the uncached input of a usage
// that does not state it. Fill CacheWrite1h where the provider says how
// much of the write has a one-hour lifetime, Reasoning where it reports
// reasoning apart (it is a part of Output, which counts every output
// token, thinking included), and Total with the total the provider
// states. Since ABI 1.9, set Tier to the service tier the response
// states it was served at ([TierOf] reads it: OpenAI's service_tier,
// Anthropic's usage.service_tier), on the message's usage and the
// step's alike, and leave it "" where the provider states none: the
// host prices flex, priority and batch requests by it, and never takes
// a missing tier for the standard one. [Usage.Plus] sums tiers as the
// host does ([TierMixed] when they differ).
//
// # Accounting, errors and status (ABI 1.3)
//
// Every raw line must produce records, be declared ignored
// ([Out.Ignored], [Out.IgnoredN] for several lines the plugin groups
// itself; the SDK declares a reassembled document's lines) or be counted unmapped ([Out.Unmapped]); the host counts a
// line that got none of these as unmapped "(no record)". A count of n
// lines covers the lines numbered up to the current one, and the host
// never sends a blank line: a plugin grouping lines across a blank one
// reports each run of consecutive lines with its own count, at its last
// line (as the SDK does for a reassembled document). Every error the
// provider reports goes through [Out.Error] (it lands in the step result's
// errors with its raw line), never only through Unmapped. A format without
// a terminal event (a session log) sets [Meta].NoTerminal and leaves the
// final status to the host, which applies spec 6.7 the same way for every
// plugin (abi's package documentation, "Final status").
//
// # Concurrency
//
// A Normalizer is used by one goroutine at a time; the host gives every
// stream its own instance.
//
// The SDK uses no reflection, no encoding/json and no strconv parser (abi's
// values parse numbers with internal/wire's), so that it stays small, fast
// inside WebAssembly and buildable with TinyGo: every KB of a module is
// time the host spends validating it at every start (RATIONALE.md, "What
// keeps the plugin modules small?").
package sdk
