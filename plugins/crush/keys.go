package crush

import "github.com/twasm/twasm/abi"

// keys are the object keys the normalizer reads (abi.Manifest.Keys): the
// host marks them in every tape, so that Get matches them by number inside
// the sandbox instead of comparing their bytes. A key missing here still
// works, at the usual cost; TestKeysCoverGets keeps the list complete.
var keys = abi.NewKeySet(
	"$twasm", "children_cost", "command", "content", "cost", "created_at", "data", "details",
	"exit_code", "finished_at", "id", "input", "is_error", "is_summary_message", "key", "message", "mime_type",
	"MIMEType", "model", "name", "output", "parent_session_id", "parts", "Path", "reason",
	"responses_data", "role", "row", "signature", "summary_message_id", "table", "text", "thinking",
	"thought_signature", "tool_call_id", "type",
)
