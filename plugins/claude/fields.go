package claude

import "github.com/twasm/twasm/abi"

// keys are the members the normalizer reads: declared (sdk.Plugin.Keys),
// so that the host marks them in every tape and Get and Lookup match
// them by number; and the members of a line's top-level object and its
// message that one pass over an object (abi.Value.Lookup) answers,
// instead of one scan of the object per Get. TestKeysCoverGets keeps the
// list complete.
var keys = abi.NewKeySet(
	"type",
	"event",
	"error",
	"content",
	"sessionId",
	"parentUuid",
	"isSidechain",
	"session_id",
	"claude_code_version",
	"version",
	"subtype",
	"model",
	"tool_use_id",
	"message",
	"timestamp",
	"id",
	"usage",
	"stop_reason",
	"tool_use_result",
	"toolUseResult",
	"isMeta",
	"isSynthetic",
	"isCompactSummary",
	"role",
	"parent_tool_use_id",
	"uuid",
	"agentId",
	"subagent_type",
	"task_description",
	"description",
	"status",
	"summary",
	"result",
	"is_error",
	"total_cost_usd",
	"totalCostUSD",
	"modelUsage",
	"errors",
	// Read from usage objects (usageKeys) and content blocks.
	"input_tokens",
	"cache_creation_input_tokens",
	"cache_read_input_tokens",
	"output_tokens",
	"output_tokens_details",
	"thinking_tokens",
	"text",
	"thinking",
	"signature",
	"name",
	"input",
	"content_block",
	"index",
	"delta",
	"partial_json",
	"prompt",
	"command",
	"stderr",
	"interrupted",
	"isAsync",
	"data",
	"parentToolUseID",
	"task_type",
	"isApiErrorMessage",
	"request",
	"request_id",
	"response",
	"permission_denials",
	"rate_limit_info",
	"behavior",
	"tool_name",
	"tool_input",
	"stdout",
	"filenames",
	"file",
	"filePath",
	"structuredPatch",
	"url",
	"attempt",
	"max_retries",
	"error_status",
	"retry_delay_ms",
	"rateLimitType",
	"resetsAt",
	"apiErrorStatus",
	"retryAttempt",
	"maxRetries",
	"attachment",
	"commandMode",
	"iterations",
	"cache_creation",
	"ephemeral_1h_input_tokens",
	"cwd",
	"custom_id",
	"rendered",
	"hookName",
	"hookEvent",
	"blockingError",
	"exitCode",
	"service_tier",
	"agent_id",
	"forkedFrom",
	"outcome",
	"level",
	"hook_name",
	"hook_event",
	"exit_code",
	"return_code",
	"tool_result_meta",
	"non_execution_kind",
	"user_feedback",
	"from",
	"to",
	"trigger",
	"category",
	"original_model",
	"originalModel",
	"fallback_model",
	"fallbackModel",
	"api_refusal_category",
	"apiRefusalCategory",
	"api_refusal_explanation",
	"apiRefusalExplanation",
	"compact_result",
	"compact_error",
	"task_id",
	"patch",
	"stop_details",
	"explanation",
	"aborted",
	"terminal_reason",
	"memories",
	"snippet",
	"skills",
	"planContent",
	"contents",
	"systemMessage",
	"hookSpecificOutput",
	"additionalContext",
	"messages",
	"maxTurns",
	"files",
	"toolName",
	"streak",
	"cause",
	"error_code",
	"lost",
	"error_message",
)

// Indexes into keys.
const (
	kType = iota
	kEvent
	kError
	kContent
	kSessionIdCamel
	kParentUuid
	kIsSidechain
	kSessionId
	kClaudeCodeVersion
	kVersion
	kSubtype
	kModel
	kToolUseId
	kMessage
	kTimestamp
	kId
	kUsage
	kStopReason
	kToolUseResult
	kToolUseResultCamel
	kIsMeta
	kIsSynthetic
	kIsCompactSummary
	kRole
	kParentToolUseId
	kUuid
	kAgentId
	kSubagentType
	kTaskDescription
	kDescription
	kStatus
	kSummary
	kResult
	kIsError
	kTotalCostUsd
	kTotalCostUSDCamel
	kModelUsage
	kErrors
	kInputTokens
	kCacheCreationInputTokens
	kCacheReadInputTokens
	kOutputTokens
	kOutputTokensDetails
	kThinkingTokens
	kText
	kThinking
	kSignature
	kName
	kInput
	kContentBlock
	kIndex
	kDelta
	kPartialJson
	kPrompt
	kCommand
	kStderr
	kInterrupted
	kIsAsync
	kData
	kParentToolUseIDCamel
	kTaskType
	kIsApiErrorMessage
	kRequest
	kRequestId
	kResponse
	kPermissionDenials
	kRateLimitInfo
	kBehavior
	kToolName
	kToolInput
	kStdout
	kFilenames
	kFile
	kFilePath
	kStructuredPatch
	kUrl
	kAttempt
	kMaxRetries
	kErrorStatus
	kRetryDelayMs
	kRateLimitType
	kResetsAt
	kApiErrorStatus
	kRetryAttempt
	kMaxRetriesCamel
	kAttachment
	kCommandMode
	kIterations
	kCacheCreation
	kEphemeral1hInputTokens
	kCwd
	kCustomId
	kRendered
	kHookName
	kHookEvent
	kBlockingError
	kExitCode
	kServiceTier
	kAgentIdSnake
	kForkedFrom
	kOutcome
	kLevel
	kHookNameSnake
	kHookEventSnake
	kExitCodeSnake
	kReturnCode
	kToolResultMeta
	kNonExecutionKind
	kUserFeedback
	kFrom
	kTo
	kTrigger
	kCategory
	kOriginalModel
	kOriginalModelCamel
	kFallbackModel
	kFallbackModelCamel
	kApiRefusalCategory
	kApiRefusalCategoryCamel
	kApiRefusalExplanation
	kApiRefusalExplanationCamel
	kCompactResult
	kCompactError
	kTaskId
	kPatch
	kStopDetails
	kExplanation
	kAborted
	kTerminalReason
	kMemories
	kSnippet
	kSkills
	kPlanContent
	kContents
	kSystemMessage
	kHookSpecificOutput
	kAdditionalContext
	kMessages
	kMaxTurns
	kFiles
	kToolNameCamel
	kStreak
	kCause
	kErrorCode
	kLost
	kErrorMessage

	nKeys
)

// fieldCache holds the members of the latest line object looked up (the
// root of its document) and of the last two other objects (a line's
// message, or the elements of a verbose json array and their messages).
// Values are compared by identity: a Value names a position in a Doc, and
// a Doc is unchanged during one call (the SDK reuses its slot in the next
// call, hence the reset at every call).
type fieldCache struct {
	// sentinel is a value of a document no line uses: the cache is
	// reset to it at every call, since the SDK reuses a call's document
	// slots in the next (a value of a new line can equal one of an
	// earlier line).
	sentinel abi.Value
	root     abi.Value
	fRoot    [nKeys]abi.Value
	v        [2]abi.Value
	f        [2][nKeys]abi.Value
	next     int
}

// reset forgets the cached objects: called at the start of every call
// (Line, End), whose documents may reuse the slots of the last call's.
func (c *fieldCache) reset() {
	c.root, c.v[0], c.v[1] = c.sentinel, c.sentinel, c.sentinel
}

// get is v.Get(keys.Names()[k]), from one pass over v shared by every key.
// The line's object, the most asked, costs no call: get inlines. (A
// missing v matches a slot only before its first use, when its members
// are all missing too.)
func (n *normalizer) get(v abi.Value, k int) abi.Value {
	if v == n.fields.root {
		return n.fields.fRoot[k]
	}
	return n.members(v)[k]
}

// noMembers is what members returns for a value that is not an object.
var noMembers [nKeys]abi.Value

// members returns the members of v in the order of keys (all missing when
// v is not an object), from the cache get reads. The array belongs to the
// cache: it must not be modified, and it is overwritten once two other
// objects are looked up, so read what is needed from it at once.
func (n *normalizer) members(v abi.Value) *[nKeys]abi.Value {
	c := &n.fields
	switch {
	case v == c.root:
		return &c.fRoot
	case v == c.v[0]:
		return &c.f[0]
	case v == c.v[1]:
		return &c.f[1]
	case v.Kind() != abi.KindObject:
		return &noMembers
	case v == v.Doc().Root():
		c.root = v
		v.Lookup(keys, c.fRoot[:])
		return &c.fRoot
	}
	j := c.next
	c.next ^= 1
	c.v[j] = v
	v.Lookup(keys, c.f[j][:])
	return &c.f[j]
}
