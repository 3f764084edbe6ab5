//go:build !urma_verbs

package extest

const buildTags = ""
