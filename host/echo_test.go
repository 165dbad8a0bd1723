package host

import (
	"context"
	"slices"
	"testing"

	"github.com/twasm/twasm/abi"
)

func TestEchoStream(t *testing.T) {
	for _, bundled := range []bool{true, false} {
		rt := newRuntime(t, testOptions())
		p := load(t, rt, "echo", bundled)
		if m := p.manifest; m.Name != "echo" || !slices.Equal(m.Providers, []string{"echo"}) {
			t.Fatalf("manifest %+v", m)
		}
		ctx := context.Background()
		in, err := p.newInstance(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if err := in.Begin(ctx, abi.BeginOptions{Provider: "echo"}); err != nil {
			t.Fatal(err)
		}
		b := batch(1, `{"text":"hello"}`, `not json`, `{"text":"wo\"rld"}`)
		out, err := in.Feed(ctx, b)
		if err != nil {
			t.Fatal(err)
		}
		got := texts(t, out, b)
		want := []string{"op1", "op3", "block:hello", "op6", "op1", "op13", "op1", "op3", "block:wo\\\"rld", "op6"}
		if !slices.Equal(got, want) {
			t.Fatalf("feed records\n got %q\nwant %q", got, want)
		}
		out, err = in.End(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if got := texts(t, out, nil); !slices.Equal(got, []string{"op11"}) {
			t.Fatalf("end records %q", got)
		}
		in.Close(ctx)
	}
}
