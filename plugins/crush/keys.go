package crush

import "github.com/twasm/twasm/abi"

// keys are the object keys the normalizer reads (abi.Manifest.Keys): the
// host marks them in every tape, so that Get matches them by number inside
// the sandbox instead of comparing their bytes, and Lookup answers every
// key of an object in one pass over it (fields). A key missing here still
// works, at the usual cost; TestKeysCoverGets keeps the list complete,
// TestKeyNumbers the k* constants in its order.
var keys = abi.NewKeySet(
	"$twasm",
	"children_cost",
	"command",
	"content",
	"cost",
	"created_at",
	"data",
	"details",
	"exit_code",
	"finished_at",
	"id",
	"input",
	"is_error",
	"is_summary_message",
	"key",
	"message",
	"mime_type",
	"MIMEType",
	"model",
	"name",
	"output",
	"parent_session_id",
	"parts",
	"Path",
	"reason",
	"responses_data",
	"role",
	"row",
	"signature",
	"summary_message_id",
	"table",
	"text",
	"thinking",
	"thought_signature",
	"tool_call_id",
	"type",
)

// The members of keys, numbered in its order: fields are indexed by them.
const (
	kTwasm            = iota // $twasm
	kChildrenCost            // children_cost
	kCommand                 // command
	kContent                 // content
	kCost                    // cost
	kCreatedAt               // created_at
	kData                    // data
	kDetails                 // details
	kExitCode                // exit_code
	kFinishedAt              // finished_at
	kID                      // id
	kInput                   // input
	kIsError                 // is_error
	kIsSummaryMessage        // is_summary_message
	kKey                     // key
	kMessage                 // message
	kMimeType                // mime_type
	kMIMETypeGo              // MIMEType
	kModel                   // model
	kName                    // name
	kOutput                  // output
	kParentSessionID         // parent_session_id
	kParts                   // parts
	kPathGo                  // Path
	kReason                  // reason
	kResponsesData           // responses_data
	kRole                    // role
	kRow                     // row
	kSignature               // signature
	kSummaryMessageID        // summary_message_id
	kTable                   // table
	kText                    // text
	kThinking                // thinking
	kThoughtSignature        // thought_signature
	kToolCallID              // tool_call_id
	kType                    // type
	nKeys
)
