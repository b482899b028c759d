//go:build purego || !amd64

package vecmath

import "testing"

func withImpls(t *testing.T, f func(t *testing.T)) { t.Run("go", f) }

func withImplsB(b *testing.B, f func(b *testing.B)) { b.Run("go", f) }
