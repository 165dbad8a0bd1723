package sdk

import "github.com/twasm/twasm/abi"

// FactsProject is the project directory a facts line (abi.SourceFacts)
// names (ABI 1.8: the project the host knows the session belongs to by
// where it found the store), unset when the line names none: a plugin
// reports it as its step's cwd or project (Meta), as its agent's store
// means it.
func FactsProject(facts abi.Value) Str {
	if p := facts.Get("project"); p.Kind() == abi.KindString && p.String() != "" {
		return Text(p)
	}
	return Str{}
}
