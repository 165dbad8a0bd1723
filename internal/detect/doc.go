// Package detect guesses which provider and format a saved output or
// session log comes from, for `twasm import --provider auto`. It looks at
// the first lines only, decides only when the evidence points one way, and
// otherwise says what it saw.
package detect
