package abi_test

import (
	"fmt"

	"github.com/twasm/twasm/abi"
	"github.com/twasm/twasm/abi/sdk"
)

// A plugin reads a provider's line through abi.Value: lookups by key and
// path, typed reads that say whether the value had that type, and
// iteration, all over the line's own bytes (sdk.Parse indexes a line the
// way the host does before a Line call).
func ExampleValue() {
	doc, ok := sdk.Parse([]byte(`{"type":"item.completed","item":{"id":"item_1","type":"command_execution","exit_code":2,"tags":["a","b"],"text":"line\nbreak"}}`))
	if !ok {
		fmt.Println("not JSON")
		return
	}
	v := doc.Root()
	item := v.Get("item")
	fmt.Println(v.Get("type").String(), item.Get("type").Is("command_execution"))
	code, isInt := v.Path("item", "exit_code").Int()
	fmt.Println(code, isInt)
	fmt.Printf("%q\n", item.Get("text").String())
	fmt.Println(item.Get("missing").Exists(), item.Get("tags").Kind() == abi.KindArray, item.Get("tags").Len())
	for it := item.Get("tags").Iter(); it.Next(); {
		fmt.Println(it.Value().String())
	}
	// Output:
	// item.completed true
	// 2 true
	// "line\nbreak"
	// false true 2
	// a
	// b
}
