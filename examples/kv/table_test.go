package main

import (
	"bytes"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestTable(t *testing.T) {
	tb := newTable()
	var k [keySize]byte
	keyOf(&k, 1)
	buf := make([]byte, 8)
	_, st := tb.get(&k, buf)
	assert.Equal(t, byte(stNotFound), st)

	tb.put(&k, []byte("first"))
	n, st := tb.get(&k, buf)
	require.Equal(t, byte(stOK), st)
	assert.Equal(t, "first", string(buf[:n]))

	tb.put(&k, []byte("2nd"))
	n, st = tb.get(&k, buf)
	require.Equal(t, byte(stOK), st)
	assert.Equal(t, "2nd", string(buf[:n]), "a PUT overwrites, also with a shorter value")

	tb.put(&k, []byte("a value too big"))
	_, st = tb.get(&k, buf)
	assert.Equal(t, byte(stTooBig), st)

	tb.put(&k, nil)
	n, st = tb.get(&k, buf)
	assert.Equal(t, byte(stOK), st)
	assert.Zero(t, n, "an empty value is a value")
	assert.Equal(t, 1, tb.len())
}

// Run with -race: writers and readers of the same keys at once, each
// reader seeing only whole values some writer stored.
func TestTableConcurrent(t *testing.T) {
	tb := newTable()
	const keys, rounds, writers, readers = 64, 2000, 4, 4
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var k [keySize]byte
			for i := range rounds {
				keyOf(&k, uint64(i%keys))
				tb.put(&k, bytes.Repeat([]byte{byte(w + 1)}, 1+(i+w)%40))
			}
		}()
	}
	bad := make(chan string, readers)
	for range readers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var k [keySize]byte
			buf := make([]byte, 64)
			for i := range rounds {
				keyOf(&k, uint64(i%keys))
				n, st := tb.get(&k, buf)
				if st == stNotFound {
					continue
				}
				if st != stOK || n == 0 || !bytes.Equal(buf[:n], bytes.Repeat(buf[:1], n)) {
					bad <- string(buf[:n])
					return
				}
			}
		}()
	}
	wg.Wait()
	close(bad)
	for b := range bad {
		t.Errorf("torn value %q", b)
	}
	assert.Equal(t, keys, tb.len())
}

// The table against a Go map as the model: enough keys to grow every
// shard several times, values on both sides of inlineValue, and keys that
// differ in one byte only (so that they share hash halves and probe
// chains). Every key must read back its last value after every growth.
func TestTableMatchesMap(t *testing.T) {
	tb := newTable()
	model := map[[keySize]byte][]byte{}
	buf := make([]byte, 2*inlineValue+8)
	var k [keySize]byte
	for i := range 20000 {
		id := uint64(i % 7000)
		keyOf(&k, id)
		if i%5 == 0 {
			k[15] ^= 0x80 // a near twin of the key
		}
		v := bytes.Repeat([]byte{byte(i)}, i%(2*inlineValue+1))
		tb.put(&k, v)
		model[k] = v
	}
	require.Equal(t, len(model), tb.len())
	for key, want := range model {
		n, st := tb.get(&key, buf)
		require.Equal(t, byte(stOK), st, "key %x", key)
		require.Equal(t, want, buf[:n], "key %x", key)
	}
	keyOf(&k, 1<<40)
	_, st := tb.get(&k, buf)
	assert.Equal(t, byte(stNotFound), st, "a key never put")
}

func BenchmarkTableGet(b *testing.B) {
	const keys = 100000
	tb := newTable()
	var k [keySize]byte
	v := make([]byte, 32)
	for id := range uint64(keys) {
		keyOf(&k, id)
		tb.put(&k, v)
	}
	buf := make([]byte, 64)
	var x uint64
	for b.Loop() {
		x = x*6364136223846793005 + 1442695040888963407
		keyOf(&k, (x>>33)%keys)
		if _, st := tb.get(&k, buf); st != stOK {
			b.Fatal(st)
		}
	}
}
