package prompt_test

import (
	"fmt"

	"github.com/openload/openload/internal/prompt"
)

func ExampleGenerate() {
	api, _ := prompt.APIOf("/v1/chat/completions")
	bodies, err := prompt.Generate(prompt.Spec{
		API: api, Model: "m", Seed: 1, Count: 2, IgnoreEOS: true,
		Prompt: prompt.Length{N: 8}, Output: prompt.Length{N: 16, Spread: 0.5},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, b := range bodies {
		fmt.Printf("%d tokens, %d asked: %s\n", b.PromptTokens, b.MaxTokens, b.JSON)
	}
	// Output:
	// 8 tokens, 8 asked: {"model":"m","messages":[{"role":"user","content":"street stream base prove visit already market touch"}],"max_tokens":8,"stream":true,"stream_options":{"include_usage":true},"ignore_eos":true}
	// 8 tokens, 9 asked: {"model":"m","messages":[{"role":"user","content":"machine flow his finger lift much charge front"}],"max_tokens":9,"stream":true,"stream_options":{"include_usage":true},"ignore_eos":true}
}
