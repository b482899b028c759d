package storage_test

import (
	"testing"

	"github.com/parqdb/parqdb/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }
