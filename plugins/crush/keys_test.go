//go:build !wasip1

package crush

import (
	"testing"

	"github.com/twasm/twasm/abi/sdk/sdktest"
)

// TestKeysCoverGets checks that every key the normalizer names in a Get or
// Path call is declared in keys.
func TestKeysCoverGets(t *testing.T) { sdktest.CheckKeys(t, keys) }

// TestKeyNumbers checks that the k* constants number keys in its order.
func TestKeyNumbers(t *testing.T) {
	sdktest.CheckKeyNumbers(t, keys, nKeys, map[int]string{
		kTwasm:            "$twasm",
		kChildrenCost:     "children_cost",
		kCommand:          "command",
		kContent:          "content",
		kCost:             "cost",
		kCreatedAt:        "created_at",
		kData:             "data",
		kDetails:          "details",
		kExitCode:         "exit_code",
		kFinishedAt:       "finished_at",
		kID:               "id",
		kInput:            "input",
		kIsError:          "is_error",
		kIsSummaryMessage: "is_summary_message",
		kKey:              "key",
		kMessage:          "message",
		kMimeType:         "mime_type",
		kMIMETypeGo:       "MIMEType",
		kModel:            "model",
		kName:             "name",
		kOutput:           "output",
		kParentSessionID:  "parent_session_id",
		kParts:            "parts",
		kPathGo:           "Path",
		kReason:           "reason",
		kResponsesData:    "responses_data",
		kRole:             "role",
		kRow:              "row",
		kSignature:        "signature",
		kSummaryMessageID: "summary_message_id",
		kTable:            "table",
		kText:             "text",
		kThinking:         "thinking",
		kThoughtSignature: "thought_signature",
		kToolCallID:       "tool_call_id",
		kType:             "type",
	})
}
