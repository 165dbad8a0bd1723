package openai

import "github.com/twasm/twasm/abi"

// keys are the object keys the normalizer reads (abi.Manifest.Keys): the
// host marks them in every tape, so that Get matches them by number inside
// the sandbox instead of comparing their bytes. A key missing here still
// works, at the usual cost; TestKeysCoverGets keeps the list complete.
var keys = abi.NewKeySet(
	"action", "approval_request_id", "approve", "arguments", "audio", "body", "cache_write_tokens",
	"cached_tokens", "call_id", "categories", "choices", "cmd", "code", "command", "commands",
	"completion_tokens", "completion_tokens_details", "content", "content_index", "cost", "created",
	"created_at", "custom_id", "data", "delta", "error", "executed_tools", "exit_code",
	"finish_reason", "flagged", "function", "function_call", "id", "incomplete_details", "index",
	"input", "input_tokens", "input_tokens_details", "instructions", "item", "item_id", "logs",
	"message", "messages", "metadata", "model", "moderation", "name", "object", "operation",
	"outcome", "output", "output_tokens", "output_tokens_details", "outputs", "part",
	"prompt_cache_hit_tokens", "prompt_tokens", "prompt_tokens_details", "queries", "reason",
	"reasoning", "reasoning_content", "reasoning_details", "reasoning_tokens", "refusal", "request", "response",
	"result", "results", "revised_prompt", "role", "server_label", "service_tier", "sources",
	"status", "stderr", "stdout", "summary", "summary_index", "text", "thinking", "tool_call_id",
	"tool_calls", "tools", "total_tokens", "transcript", "type", "usage", "x_groq",
)

// objectNames are the members of a payload object dispatches on (and
// chunk reads), in the order of the o* constants; all are in keys
// (TestLookupKeysDeclared).
var (
	objectNames = [...]string{"object", "type", "error", "choices", "output", "status", "usage", "request", "body", "response", "input", "model", "messages", "service_tier"}
	objectKeys  = abi.NewKeySet(objectNames[:]...)
)

const (
	oObject = iota
	oType
	oError
	oChoices
	oOutput
	oStatus
	oUsage
	oRequest
	oBody
	oResponse
	oInput
	oModel
	oMessages
	oServiceTier
)
