package opencode

import "github.com/twasm/twasm/abi"

// keys are the object keys the normalizer reads (abi.Manifest.Keys): the
// host marks them in every tape, so that Get matches them by number inside
// the sandbox instead of comparing their bytes, and Lookup answers every
// key of an object in one pass over it (fields). A key missing here still
// works, at the usual cost; TestKeysCoverGets keeps the list complete,
// TestKeyNumbers the k* constants in its order.
var keys = abi.NewKeySet(
	"$twasm",
	"agent",
	"attempt",
	"background",
	"cache",
	"callID",
	"command",
	"completed",
	"content",
	"cost",
	"created",
	"cwd",
	"data",
	"description",
	"directory",
	"end",
	"error",
	"exit",
	"filename",
	"files",
	"finish",
	"id",
	"ignored",
	"input",
	"info",
	"interrupted",
	"message",
	"message_id",
	"messages",
	"message_time_created",
	"messageID",
	"metadata",
	"mime",
	"model",
	"modelID",
	"name",
	"output",
	"parent_id",
	"parentID",
	"part",
	"parts",
	"path",
	"prompt",
	"providerResult",
	"ran",
	"read",
	"reason",
	"reasoning",
	"rejected",
	"role",
	"root",
	"row",
	"sessionID",
	"signal",
	"start",
	"state",
	"status",
	"structured",
	"synthetic",
	"table",
	"text",
	"time",
	"time_created",
	"timestamp",
	"timeout",
	"tokens",
	"tool",
	"total",
	"type",
	"version",
	"write",
	"retry",
	"idle_outcome",
	"time_idle",
	"idle_error_message",
	"idle_error_type",
)

// The members of keys, numbered in its order: fields are indexed by them.
const (
	kTwasm              = iota // $twasm
	kAgent                     // agent
	kAttempt                   // attempt
	kBackground                // background
	kCache                     // cache
	kCallID                    // callID
	kCommand                   // command
	kCompleted                 // completed
	kContent                   // content
	kCost                      // cost
	kCreated                   // created
	kCwd                       // cwd
	kData                      // data
	kDescription               // description
	kDirectory                 // directory
	kEnd                       // end
	kError                     // error
	kExit                      // exit
	kFilename                  // filename
	kFiles                     // files
	kFinish                    // finish
	kID                        // id
	kIgnored                   // ignored
	kInput                     // input
	kInfo                      // info
	kInterrupted               // interrupted
	kMessage                   // message
	kMessageIDCol              // message_id
	kMessages                  // messages
	kMessageTimeCreated        // message_time_created
	kMessageID                 // messageID
	kMetadata                  // metadata
	kMime                      // mime
	kModel                     // model
	kModelID                   // modelID
	kName                      // name
	kOutput                    // output
	kParentIDCol               // parent_id
	kParentID                  // parentID
	kPart                      // part
	kParts                     // parts
	kPath                      // path
	kPrompt                    // prompt
	kProviderResult            // providerResult
	kRan                       // ran
	kRead                      // read
	kReason                    // reason
	kReasoning                 // reasoning
	kRejected                  // rejected
	kRole                      // role
	kRoot                      // root
	kRow                       // row
	kSessionID                 // sessionID
	kSignal                    // signal
	kStart                     // start
	kState                     // state
	kStatus                    // status
	kStructured                // structured
	kSynthetic                 // synthetic
	kTable                     // table
	kText                      // text
	kTime                      // time
	kTimeCreated               // time_created
	kTimestamp                 // timestamp
	kTimeout                   // timeout
	kTokens                    // tokens
	kTool                      // tool
	kTotal                     // total
	kType                      // type
	kVersion                   // version
	kWrite                     // write
	kRetry                     // retry
	kIdleOutcome               // idle_outcome
	kTimeIdle                  // time_idle
	kIdleErrorMessage          // idle_error_message
	kIdleErrorType             // idle_error_type
	nKeys
)
