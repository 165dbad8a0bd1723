package wire

// CheckTape gives the tests of package wire_test the check the batch
// decoder makes of every tape.
var CheckTape = checkTape

// IndexBackslashWords is the TinyGo build's search for an escape.
func IndexBackslashWords(b []byte) int { return indexByteWords(b, '\\') }

// IndexByteWords is the TinyGo build's IndexByte.
var IndexByteWords = indexByteWords[string]
