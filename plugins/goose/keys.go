package goose

import "github.com/twasm/twasm/abi"

// keys are the object keys the normalizer reads (abi.Manifest.Keys): the
// host marks them in every tape, so that Get matches them by number inside
// the sandbox instead of comparing their bytes. A key missing here still
// works, at the usual cost; TestKeysCoverGets keeps the list complete.
var keys = abi.NewKeySet(
	"$twasm", "accumulated_cache_read_tokens", "accumulated_cache_write_tokens", "accumulated_cost",
	"accumulated_input_tokens", "accumulated_output_tokens", "accumulated_total_tokens", "accumulated_usage", "annotations",
	"cache_read_input_tokens", "cache_write_input_tokens", "input_tokens", "output_tokens", "total_tokens",
	"arguments", "audience", "command", "content", "content_json", "conversation", "created", "created_at", "created_timestamp",
	"error", "exit_code", "id", "inference", "isError", "key", "message", "message_count", "message_id", "messages", "metadata",
	"metadata_json", "mime_type", "mimeType", "model_config", "model_config_json", "model_name", "msg", "name",
	"notificationType", "parent_session_id", "requestedModel", "resolvedModel", "resource", "role",
	"row", "status", "structuredContent", "table", "text", "thinking", "tool_name", "tool_result", "toolCall", "toolResult",
	"type", "uri", "usage", "userVisible", "value", "working_dir",
)
