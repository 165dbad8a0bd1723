package clitest

import (
	"testing"

	"github.com/twasm/twasm/internal/testing/goldensrc"
)

// ReadGoldenSource reads golden input name of provider and splits it
// back into what the agent wrote (goldensrc.Split).
func ReadGoldenSource(t testing.TB, provider, name string) goldensrc.Source {
	t.Helper()
	return goldensrc.Split(t, ReadFile(t, Golden(provider, name)))
}
