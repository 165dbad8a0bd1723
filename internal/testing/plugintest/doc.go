// Package plugintest is the test support the bundled plugins share
// beyond the public abi/sdk/sdktest (which runs the golden, conformance,
// batching and fuzz checks every plugin runs, the bundled ones included):
// what is specific to this repository or to its internals.
//
//   - [Conformance] runs every real capture of ../shared/fixtures/<provider>/
//     (next to the repository root; the test skips when there is none)
//     through sdktest.Test, with the expectation files of
//     [ExpectationDir], and checks facts read from the raw capture apart
//     from the plugin: every tool call of the raw input is a tool.call,
//     every piece of model text lands in a block. How to find the tool
//     calls and the model text is the provider's own logic and stays in
//     the plugin's test ([Conformance.Facts]).
//   - [FromResult] makes an [Outcome] of an sdktest run, for a plugin's
//     sdktest.Options.Check: the facts a plugin's test reads from its
//     golden inputs and captures apart from the plugin are checked there,
//     in sdktest.Test's conformance subtests, the scaffolding (inputs,
//     runs, faults, unaccounted lines, unmapped types, valid events)
//     being sdktest's, as in a plugin author's own test. [Run] runs one
//     input natively through normalize.Run with any normalize.Options.
//     An Outcome gives the tool.call ids, block texts and result
//     statuses, and the trace of which scope each call and result went
//     to and which call each result answers ([Outcome.ToolTrace],
//     [WantToolTrace]: the plugins' call-id scope tests), and a summary
//     of which turns a run holds ([Outcome.Summary]: its texts, calls and
//     tokens, the plugins' fork tests; [Turns] runs an input through
//     sdktest and gives it, every line accounted for; [OneAssistant]
//     runs one and gives its one assistant message, without a warning:
//     the plugins' tests that a streamed message is not split); [CheckTexts],
//     [Outcome.CheckCalls] and [Outcome.CheckFailed] check them; [Docs] decodes a capture apart
//     from the plugin; [Captures] lists an agent's captures in the
//     repository's testdata/captures, [RepoRoot] finds that repository
//     (the nearest go.mod above the test's directory).
//   - [UsageSide] checks a plugin's step usage side by side with the
//     raw input: every input [UsageInputs] lists (the agent's captures,
//     golden inputs, shared fixtures) is run natively, and each counter
//     compared with what the plugin's test computes from the raw bytes
//     by reading the format itself ([RawUsage]); a raw input that states
//     no usage must give a step that states none (unknown, never 0), and
//     every step's usage must agree with itself (transcript.Usage.Check).
//
// It is imported from tests only.
package plugintest
