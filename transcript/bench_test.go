package transcript

import (
	"strings"
	"testing"
)

func benchEvent() *Event {
	e := mk(42, runA, MessageAssistant, "review", 0)
	e.Message().Blocks = []Block{TextBlock(strings.Repeat("The quick brown fox jumps over the lazy dog. ", 5)[:200])}
	return e
}

func BenchmarkAppendEvent(b *testing.B) {
	e := benchEvent()
	buf, err := AppendEvent(nil, e)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(buf)))
	b.ReportAllocs()
	for b.Loop() {
		buf, err = AppendEvent(buf[:0], e)
		if err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecodeEvent(b *testing.B) {
	line, err := AppendEvent(nil, benchEvent())
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(line)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := DecodeEvent(line); err != nil {
			b.Fatal(err)
		}
	}
}
