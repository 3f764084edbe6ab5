package main

import (
	"os"
	"testing"

	"github.com/urma-go/sdk/internal/leakcheck"
)

func TestMain(m *testing.M) { os.Exit(leakcheck.Main(m)) }
