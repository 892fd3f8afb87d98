// Package prompt makes the request bodies of a model-server load, counted
// in tokens: Count counts a text's tokens with OpenAI's cl100k_base.
package prompt
