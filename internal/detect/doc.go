// Package detect guesses which provider and format a saved output or
// session log comes from, for `twasm import --provider auto`. It looks at
// the first lines only, decides only when the evidence points one way, and
// otherwise says what it saw: an input that is text only, no line JSON
// (the provider error that is all kimi --print writes when its first
// model call fails), is no provider's, told apart with its first line
// quoted and --provider asked for.
package detect
