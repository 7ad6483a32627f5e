package config

// DefaultPersonaPrompt is the built-in character of the default persona.
const DefaultPersonaPrompt = `You are banter, a witty, warm regular in this Discord server. ` +
	`You talk like a friend in the room: short, casual, on topic, never preachy. ` +
	`You know who said what and answer the person you are talking to. ` +
	`If nobody needs you to speak, answer exactly [SKIP].`

// DefaultForcedReplyPlaceholder is text.forcedReplyPlaceholder's default.
const DefaultForcedReplyPlaceholder = "Hmm, I don't have a good answer to that one."

// DefaultFilteredReplyText is safety.filteredReplyText's default.
const DefaultFilteredReplyText = "Sorry, I can't say that here."

// Default returns the built-in configuration: what banter runs with when no file is given.
func Default() *Config {
	return &Config{
		Bot: Bot{
			Name:             "banter",
			AnswerToNickname: true,
			Persona:          "default",
			Personas: map[string]Persona{
				"default": {Prompt: DefaultPersonaPrompt, Description: "banter's own easy-going self"},
			},
			CommandPrefix: "!",
		},
		Discord: Discord{
			APIURL:                    "https://discord.com",
			RegisterSlashCommands:     true,
			ShutdownTimeoutSeconds:    15,
			SendAttemptTimeoutSeconds: 10,
			Shards:                    "auto",
			ProcessCount:              1,
		},
		Permissions: Permissions{PingRepliedUser: true},
		Activity: Activity{
			ReplyLevelInitiative:          50,
			ReplyLevelNonInitiative:       20,
			ReplyCoalesceWindowSeconds:    1.5,
			ReplyCoalesceMaxMessages:      6,
			MaxPromptsPerHour:             60,
			ExplicitReservePromptsPerHour: 20,
			PerUserPromptShare:            0.5,
			InitiativeReplyShare:          0.65,
			RecentWindowSeconds:           300,
			QueueCapacity:                 32,
		},
		Context: Context{
			ReplyChainDepth:             40,
			IncludeOwnMessagesInHistory: true,
			HistoryLimit:                50,
			ClusterGapMinutes:           60,
			ClusterLookback:             25,
			MaxCharsPerMessage:          1200,
			TokenBudget:                 6000,
			MaxParticipants:             12,
		},
		Text: Text{
			ForcedReplyOnSkip:      "placeholder",
			ForcedReplyPlaceholder: DefaultForcedReplyPlaceholder,
			TargetedReplies:        true,
			CatchUpMaxAgeMinutes:   15,
			TargetMaxAgeMinutes:    30,
		},
		Safety: Safety{FilteredReplyText: DefaultFilteredReplyText},
		Prices: DefaultPrices(),
		Budget: defaultBudget(),
		LLM: LLM{
			Model:          "gpt-5-mini",
			API:            "responses",
			BaseURL:        "https://api.openai.com/v1",
			TimeoutSeconds: 60,
			MaxRetries:     2,
			DirectAddressClassifier: DirectAddressClassifier{
				Model:           "gpt-5-nano",
				Threshold:       0.75,
				ReasoningEffort: "lowest",
			},
		},
		ReplyFollowupLLM: ReplyFollowupLLM{Model: "gpt-5-mini"},
		Lookups: Lookups{
			MaxPerTurn:     3,
			TimeoutSeconds: 15,
			MaxResultChars: 2000,
			Memory:         MemoryLookup{Enabled: true, Scope: "channel", MaxResults: 5},
			Image:          ImageLookup{Enabled: true},
		},
		MemoryLLM:  MemoryLLM{Model: "gpt-5-nano"},
		Memory:     defaultMemory(),
		Embeddings: defaultEmbeddings(),
		Images: Images{
			Enabled:             true,
			Mode:                "inline",
			MaxPerTurn:          4,
			MaxBytes:            5 << 20,
			FetchTimeoutSeconds: 10,
		},
		Voice:   defaultVoice(),
		Metrics: Metrics{Listen: "127.0.0.1:9090"},
		Store:   Store{Driver: "sqlite", DSN: "./data/banter.db", RetentionDays: 90, ForgetRemovedGuildAfterDays: 30, PGVector: "auto"},
		Log:     Log{Level: "info", Format: "json"},
	}
}

// defaultVoice is the voice section of Default.
func defaultVoice() Voice {
	return Voice{
		Enabled:                     true,
		Mode:                        "stt_pipeline",
		RealtimeReplyStrategy:       "brain",
		SendClock:                   "own",
		ReplyEagerness:              30,
		InactivityLeaveSeconds:      300,
		MaxSessionMinutes:           180,
		FocusedSpeakerWindowSeconds: 20,
		RecentReplyWindowSeconds:    30,
		JoinGreetingWindowSeconds:   10,
		ReplyDecisionLLM: ReplyDecisionLLM{
			Enabled:         true,
			Model:           "gpt-5-nano",
			MaxAttempts:     2,
			TimeoutMs:       2500,
			ReasoningEffort: "lowest",
		},
		GenerationLLM: ModelRef{Model: "gpt-5-mini"},
		STTPipeline: STTPipeline{
			TranscriptionModel:  "gpt-4o-mini-transcribe",
			TTSModel:            "gpt-4o-mini-tts",
			TTSVoice:            "alloy",
			StreamTranscription: true,
		},
		Realtime: Realtime{Provider: KindOpenAI},
		GeminiRealtime: GeminiRealtime{
			Model:                    "gemini-3.8-live",
			Voice:                    "Kore",
			CompressionTriggerTokens: 100_000,
		},
		OpenAIRealtime: OpenAIRealtime{
			Model:             "gpt-realtime",
			Voice:             "marin",
			SessionMaxMinutes: 55,
		},
		Endpointing: Endpointing{
			SilenceMs:         800,
			MinUtteranceMs:    300,
			MaxUtteranceMs:    15000,
			RoomHoldMs:        1500,
			CompleteSilenceMs: 800,
			TrailingSilenceMs: 1200,
			FalseEndMs:        1500,
			Detector:          "neural",
		},
		Speculation: Speculation{Enabled: true, PauseMs: 200, Transcription: "session"},
		BargeIn:     BargeIn{Policy: "anyone", MinSpeechMs: 400, EchoGuardMs: 250},
	}
}
