"""The shared library of Module 9 (RLVR & GRPO): one concept a module.

tasks        task families and the train/held-out split rule
verifiers    the numeric verifier and the task verifiers, each with a passport
sampling     the group sampler (KV cache, behaviour log-probs, stop reasons)
policies     the small GRU policy of the CPU lab and its character tokenizer
lora         LoRA adapters through peft; trainable-fraction report
reference    the frozen reference model
baselm       building BaseLM (tokenizer, corpus, pretraining, artifact checks)
gru_lab      the CPU lab of lesson 9.5 (GRU policy, constrained grammar, clipped updates)
level_b      the real-model branch: TRL's GRPOTrainer + peft LoRA (BaseLM on a CPU, Qwen3 on Colab)
trainer      the simplified-GRPO trainer scaffold (the step itself is passed in)
diagnostics  the run dashboard's records
plots        matplotlib figures of a run's history
passport     run passports: config + versions + verifier passport + hashes
selfcheck    self-check question widgets for the lessons
runtime      where the code runs (student, autograder) and what that implies

Nothing here implements a function that a lesson grades; graded functions are passed in.
"""
