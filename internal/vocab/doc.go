// Package vocab holds the format's word rules that twasm's own writers and
// readers share but a library user has no call for: the step path
// grammar, the timestamp layout, the sets of step statuses, block types
// and tool kinds, and the older tool-status words read as the closed set. It imports only the standard library, so package
// transcript builds on it.
//
// The words are those of transcript's constants (StatusOK...,
// BlockText..., ToolExecute...); transcript's tests check that the two
// agree, and its unexported Valid checks call these.
package vocab
