package web

import (
	"os"
	"testing"
)

func TestMain(m *testing.M) {
	code := m.Run()
	removeSharedDemo()
	os.Exit(code)
}
