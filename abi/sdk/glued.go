package sdk

// GluedObjects splits a line that holds JSON objects one after another,
// with no newline between them (`{...}{...}`: an append cut short, or two
// writers' records glued, which some agents' own readers recover, Qwen
// Code's jsonl-utils among them), into the objects' bytes, in order. It
// walks the line once, counting braces outside strings (a string's
// escapes included); each balanced top-level {...} is one object, which
// the caller parses (sdk.Parse) and may still find malformed. whole is
// false when anything but whitespace lies outside the objects (a record
// cut mid-way, a stray brace, a top-level string or array). A line of one
// object gives that object, whole; the objects alias b.
func GluedObjects(b []byte) (objs [][]byte, whole bool) {
	whole = true
	depth, start := 0, -1
	inString, escape := false, false
	for i, c := range b {
		switch {
		case escape:
			escape = false
		case inString:
			if c == '\\' {
				escape = true
			} else if c == '"' {
				inString = false
			}
		case c == '"':
			if depth == 0 {
				whole = false
			}
			inString = true
		case c == '{':
			if depth == 0 {
				start = i
			}
			depth++
		case c == '}':
			depth--
			switch {
			case depth == 0 && start >= 0:
				objs = append(objs, b[start:i+1:i+1])
				start = -1
			case depth < 0:
				whole, depth, start = false, 0, -1
			}
		case depth == 0 && c != ' ' && c != '\t' && c != '\r' && c != '\n':
			whole = false
		}
	}
	if depth != 0 || inString || start >= 0 {
		whole = false
	}
	return objs, whole && len(objs) > 0
}
