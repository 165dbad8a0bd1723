// Package openai is the twasm normalizer for the OpenAI HTTP APIs (and
// servers compatible with them). It is a plain Go package (tests, fuzzing
// and the native baseline run it through sdk.Plugin.Driver); plugins/openai/wasm
// is the WebAssembly entry point. It uses no reflection, no encoding/json
// and no fmt, so that it also builds with TinyGo.
//
// [Plugin] is the package's public face: the bundled wasm module is built
// from it (plugins/openai/wasm), and a Go program can run it in process,
// without the sandbox, with capture.NativePlugin (README, Using twasm as a
// library). twasm's public packages are transcript, recorder, lifecycle,
// capture and host; a plugin author imports abi/sdk, abi, golden and, in tests,
// abi/sdk/sdktest; each plugins/<provider> package exports its
// normalizer. Everything else in the
// module is internal (README, Layout).
//
// # Formats
//
// Each payload says what it is, so the format is detected per payload
// and the first one names the step's format:
//
//   - chat-completion: a chat.completion body, on one line or
//     pretty-printed over many (reassembled until its brackets balance,
//     by the SDK, sdk.Plugin.Reassemble, then indexed; lines that never make a document are
//     counted as "non_json").
//   - chat-sse: chat.completion.chunk payloads, with data: framing or one
//     per line.
//   - responses: a Responses API response object, or the body of
//     /responses/compact (object response.compaction: its output items
//     and usage; ok, since the API returns it whole on success).
//   - responses-sse: Responses API events (response.*, error), with
//     event:/data: framing or one payload per line.
//   - batch-output: the output file of the Batch API (/v1/batches), a
//     line per request {id: "batch_req_...", custom_id, response:
//     {status_code, request_id, body}, error}; the body is read as one of
//     the formats above. OpenAI bills these requests at its batch rate,
//     so the step names this format when its first line is one, and a
//     response read outside such a line afterwards turns it back to that
//     response's format with a warning (the step is then priced at the
//     standard rates, never below the bill). Nothing in a live
//     response's body says it was a batch request.
//
// SSE framing (event:, id:, retry:, comments), blank lines and
// "data: [DONE]" are the wire format, not content: they are never counted
// as unmapped. A request/response log ({"request":..., "response":...}),
// a Batch API line ({"response":{"body":...}}) and bare request bodies are
// unwrapped: a request contributes the prompt (a message.user whose
// instructions/system texts have origin system_prompt; texts repeated by
// later requests of the same conversation are reported once) and the
// outcomes of earlier calls (function_call_output and the other *_output
// items, Chat "tool" messages) as tool.result joined by call id (a
// local_shell_call_output, which has no call_id, names its call by id).
// A Chat Completions call the log shows only in a request's history (not
// the response that made it) is a message.assistant of its own with its
// tool_use block, and its tool.call.
//
// Chat Completions servers may give calls of different responses one id
// (a local server names every call call_1; ids are unique per response,
// not per session). A call naming the id of a call whose result was
// reported is a new call, as the host reads it; a repeat before the
// result (another choice, a snapshot read again) is the same call. A
// request resends the whole conversation, so its history is told from
// what was reported by place: the k-th assistant call (or tool message)
// naming an id is new only when fewer than k were reported for the id. A
// history trimmed of its early messages undercounts, so a call reusing an
// id there is missed rather than reported twice. Responses API call ids
// are OpenAI's own and never reused: a call id is reported once.
//
// # Messages
//
// Chat Completions: one message per choice of a response; the content
// deltas are appended to one text block, reasoning_content / reasoning
// (compatible servers) to a thinking block before it, refusal to a text
// block of its own (a refusal is what the model said); an answer spoken
// (audio output: content null) is its audio's transcript, a text block
// like content (the audio data is not kept). Content sent as a
// list of parts (Mistral) is read part by part, in a response and in a
// stream's deltas alike: text parts are text, thinking parts ({type
// thinking, thinking: a string or text parts}) thinking. The legacy
// Completions API (object text_completion) is read the same way, each
// choice's text being the delta of its content. Tool call
// fragments are joined by index: id and name come from the first
// fragment, the arguments are appended to the block's tool input (parsed
// by the host when the message closes, "" being {}) and joined inside the
// plugin as well, since the tool.call needs the whole value. A server that
// sends no call id gets "<response id>#<choice>.<n>". A fragment that
// adds nothing to its call (Qwen repeats one with "" arguments) is
// declared ignored, as is any chunk that adds nothing to the transcript
// (an empty delta between pieces, a delta of annotations alone, an
// empty reasoning_details entry, a finish_reason sent again): every
// line is accounted for. A chunk whose delta holds only a field the
// plugin does not read is counted unmapped as "delta/<field>" instead. OpenRouter's reasoning_details repeat the
// reasoning string; one of type reasoning.encrypted, in a message with
// no readable reasoning, is a thinking block marked redacted (the
// Responses API's encrypted reasoning is too). The tools a server runs
// itself and lists as executed_tools (Groq's compound models: search,
// visit, ...) are tool calls with their results, tool_use and
// tool_result blocks of the message, named "<response id>#<choice>.executed.<index>"
// (the server gives them no id). What moderation results (Chat
// Completions' moderation, a chunk's or a body's, and the Responses
// API's) flagged is a warning naming the side (input, output) and the
// categories; a result that flagged nothing says nothing. A message closes at
// the usage-only chunk, [DONE], the next response or the end; usage
// belongs to the message only when the response has one choice (it is
// per response), and is added to the step once per response.
//
// Responses API: one message per response (a multi-step tool loop in one
// stream gives several), its blocks the output items' parts in output
// order: reasoning summaries (and reasoning_text) are thinking; a
// reasoning item with nothing readable (encrypted_content only, or no
// summary) is a thinking block marked redacted; output_text and refusal
// are text; function_call, custom_tool_call and the built-in tools are
// tool_use blocks. Every block is keyed by (item id, part index), so
// deltas build it and the first snapshot (output_text.done,
// content_part.done, output_item.done or the final response object)
// replaces it once; later snapshots of the same part are ignored, so
// nothing is written twice. Argument deltas are keyed by item_id and
// joined to the call_id the item announced in output_item.added.
//
// # Tools
//
// Every function call, custom tool call and built-in tool item is a
// tool.call (once per call id). Kinds come from the name only where it is
// obvious (shell/exec_command → execute with its command, read_file →
// read, apply_patch → edit, grep/file_search → search, web_search/fetch →
// fetch, update_plan → think); a caller's own functions are "other". The
// built-in tools: web_search_call → fetch, file_search_call → search,
// code_interpreter_call → execute, mcp_call → other (named
// "<server_label>.<name>"), local_shell_call and shell_call → execute,
// apply_patch_call → edit, computer_call and image_generation_call →
// other (an image generation's input is the revised_prompt the tool used,
// its output the image, base64), tool_search_call → search, program (programmatic tool calling)
// → execute, xAI's x_search_call → search (named after the search it
// ran, run by the server, no output). Those OpenAI runs itself carry their outcome, reported as a
// tool_result block and a tool.result when the item is finished, or
// answer it with an output item of the same response (shell_call_output
// of the shell tool in OpenAI's container, tool_search_output, whose
// server-run form names no call id and answers the latest search,
// program_output); the others, and every function call, get their
// result only from the next request's input: a call whose result is not in the data is dangling,
// which the host reports (the caller runs tools between requests), not an
// error. An mcp_approval_request (an MCP call waiting for the user's
// approval) is a tool.call named like mcp_call, dangling until its
// outcome: the mcp_call that names it in approval_request_id (whose result
// becomes the request's result, so the ledger holds one call), or an
// mcp_approval_response with approve false in the next request (denied,
// with its reason). mcp_list_tools (OpenAI listing a server's tools for
// the model) is not an action of the agent and is not mapped; a listing
// that failed is reported as a provider error.
//
// Result statuses are the spec's words: completed (or none) is ok,
// failed (or an item carrying an error) is error, incomplete is
// cancelled; anything not ok carries error text. A shell_call_output
// (an output item, or the caller's input item) is read per command
// {stdout, stderr, outcome}: its output is their stdout and stderr, a
// timeout outcome makes it cancelled, a non-zero exit code an error
// ("exit code N: <last line>", the first failing command's code). A
// function's output that states an exit code (Codex's shell functions:
// "Exit code: N" or "Process exited with code N" above "Output:", or the
// JSON {output, metadata: {exit_code}}) carries it, and a non-zero one
// makes a completed result an error (sdk.SplitOutputHeader,
// sdk.HeaderExitCode, as the codex plugin reads it). The
// shell and apply_patch deltas that the done items repeat
// are declared ignored. A compaction item (the conversation compacted
// into encrypted content, by server-side compaction or in the body of
// /responses/compact) has nothing readable: it is a warning that the
// model no longer sees what it replaced. A message of another role than
// the assistant's in the output (an input item a /responses/compact body
// keeps beside its compaction item) is context the model continues from,
// a message.user of injected context, never the model's text.
//
// # Status
//
// A finish_reason, or a response's final status, is the terminal event:
//
//   - stop, tool_calls, function_call and unknown reasons: ok.
//   - length (and max_tokens from compatible servers), and a Responses
//     "incomplete" whatever its reason (max_output_tokens included):
//     incomplete, with the reason as the error text and in the message's
//     stop_reason. The provider says the answer was cut, and a run whose
//     own status is incomplete is recorded so (spec §6.7); the Claude
//     plugin does the same with an API response's max_tokens.
//   - content_filter (either API): error. The provider withheld the
//     output, so the step did not deliver an answer.
//   - A refusal (Chat Completions' message.refusal or delta.refusal, a
//     Responses refusal content part) in a response that otherwise ends
//     ok: error, "refusal: the model declined to answer: <its text>"; the
//     model declined to do what was asked, as the Claude plugin reads an
//     Anthropic stop_reason refusal. The refusal stays the message's
//     text and the final answer, and, like a content filter's, another
//     choice does not override it.
//   - Responses "failed": error with response.error.message; "cancelled":
//     error.
//   - An error body {error:{message,type,code}}, data: {"error":...} and
//     the Responses "error" event: error (the call failed; a following
//     response.failed restates it).
//
// A later terminal report replaces an earlier one (the last response of a
// tool loop decides), except that within one chat response a choice cut by
// the content filter is not overridden by another choice. A request log
// whose last request (a request body after the last terminal report) got
// no response is incomplete: the log ends on a prompt, or on tool
// outputs, that no response answered (spec 6.7; a log of requests alone
// is incomplete too, having no terminal report). A chat stream
// that reached [DONE] without any finish_reason is ok; a stream cut
// before its terminal event is left without one (the host makes it
// incomplete), its open messages are written and its calls reported with
// the arguments received so far.
//
// # Usage
//
// prompt_tokens / input_tokens are totals already (cached included):
// input_tokens; prompt_tokens_details.cached_tokens /
// input_tokens_details.cached_tokens: cache_read (DeepSeek's
// prompt_cache_hit_tokens when that is all there is);
// input_tokens_details.cache_write_tokens: cache_write; completion_tokens
// / output_tokens: output_tokens; *_details.reasoning_tokens: reasoning.
// The last usage a chat stream reports wins (servers that repeat it send
// running totals); the step adds each response's usage once. Groq's
// streams state it in x_groq.usage, read as usage.
//
// Service tier (ABI 1.9). The response's top-level service_tier (a Chat
// Completions body or chunk, the last a stream's chunks state; a
// Responses object, the one of the object carrying the usage: a
// response.completed states the tier the response was served at,
// "default", "flex", "priority", where response.created echoes the
// request's "auto") is the tier of the response's usage, its message's
// and the step's. null or absent leaves it unset.
//
// Cost. A cost the provider states in usage (OpenRouter's usage.cost, in
// USD, in Chat and Responses bodies and streams) is kept, a stated 0
// included (spec §6.6): each response's cost (the chat stream's last
// report, as for its usage) adds to the step's cost_usd. Nothing is priced
// here; OpenAI itself states no cost.
//
// # Unmapped
//
// Counted by native type: "non_json" for text that is not JSON (a
// banner, a truncated line, a pretty-printed document that never
// closed), the event type for unknown Responses events, "item/<type>"
// for unknown output items, "content/<type>" for unknown content parts,
// "object/<object>" or the type for other payloads. What a payload holds
// that the plugin knows is kept beside the count: the known items, parts
// and usage of a response with unknown ones, and of an object of the API
// it does not know: one with output items, or a response.* object, is
// read as a response; any other with usage adds its usage to the step
// (no message is made up for it). An object of the API is never taken
// for another provider's. Hosted tools'
// progress events (response.web_search_call.searching, ...), the
// lifecycle events (created, in_progress, output_item.added/.done,
// content_part.added/.done, the text and summary .done events, whose
// content is written once from the items and parts), annotations, SSE
// framing and [DONE] are declared ignored (Out.Ignored), as are the lines
// of a pretty-printed document (accounted for by the document). A hosted
// tool's progress event and a lifecycle event also reopen their
// response's message (which only refreshes it): the host closes a message
// no record has named for 64 raw lines, and a code interpreter's code or
// a patch's diff may stream for hundreds before its item's done event
// writes anything, an answer's annotations one event each.
//
// keys (sdk.Plugin.Keys) lists every object key the normalizer reads, so
// that the host marks them in its tapes and Get matches them by number
// inside the sandbox; TestKeysCoverGets keeps the list complete. A
// payload object is read in one pass (abi.Value.Lookup of objectKeys;
// TestLookupKeysDeclared keeps them in keys).
package openai
