package codex

import "github.com/twasm/twasm/abi"

// keys are the object keys the normalizer reads (abi.Manifest.Keys): the
// host marks them in every tape, so that Get matches them by number inside
// the sandbox instead of comparing their bytes. A key missing here still
// works, at the usual cost; TestKeysCoverGets keeps the list complete.
var keys = abi.NewKeySet(
	"Err", "Ok", "a", "action", "agents_states", "aggregated_output", "approval", "arguments",
	"base_instructions", "cache_write_input_tokens", "cached_input_tokens", "call_id", "changes", "cli_version", "cmd", "code", "command",
	"content", "cwd", "delta", "encrypted_content", "error", "exit_code", "id", "info", "input",
	"input_tokens", "instructions", "invocation", "isError", "is_error", "item", "item_id", "item_type",
	"items", "last_agent_message", "last_token_usage", "m", "message", "meta", "metadata", "method", "model", "msg", "name",
	"num_turns", "output", "output_tokens", "params", "payload", "prompt", "provider", "query", "questions", "reason",
	"reasoning_output_tokens", "receiver_thread_ids", "total_tokens", "record_type", "result", "role", "sandbox",
	"sender_thread_id", "server", "session_id", "status", "stderr", "stdout", "success", "summary", "t",
	"text", "thread_id", "timestamp", "tool", "tools", "total_token_usage", "type", "usage",
	"agent_path", "author", "recipient", "source", "subagent", "thread_spawn", "kind",
	"replacement_history", "forked_from_id", "turn_id", "started_at",
	"review_output", "from_model", "to_model", "overall_explanation", "overall_correctness", "findings", "title", "body", "code_location",
	"absolute_file_path", "line_range", "start", "end",
	"revised_prompt", "content_items", "target_item_id", "rationale",
	"new_thread_id", "receiver_thread_id", "completed", "errored", "new_agent_nickname", "new_agent_role", "statuses",
	"run", "event_name", "status_message", "entries", "details", "response_id",
)

// rootNames are the members of a line's object Line dispatches on, in the
// order of the r* constants; all are in keys (TestLookupKeysDeclared).
var (
	rootNames = [...]string{"type", "payload", "msg", "method", "params", "prompt", "record_type", "id", "timestamp", "model", "provider", "sandbox", "approval"}
	rootKeys  = abi.NewKeySet(rootNames[:]...)
)

const (
	rType = iota
	rPayload
	rMsg
	rMethod
	rParams
	rPrompt
	rRecordType
	rID
	rTimestamp
	rModel
	rProvider
	rSandbox
	rApproval
)
