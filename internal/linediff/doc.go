// Package linediff computes a line diff: the longest common subsequence
// of two line lists, walked into an edit script. golden diffs expected
// and produced renderings with it, the views show file edits with it.
package linediff
