# experiments/timeline.mk - the memory timeline of a training step, the first figure of the paper's
# single-GPU experiment: Llama-3.2-3B sequence classification, T=256, logical batch 8 in physical
# batches of 2, profiled to the byte on the dry backend; and a tiny model measured on the cpu
# backend (real time on the x axis). included by the Makefile: make figures
FIGURES += figures/timeline.png figures/timeline-cpu.png

results/timeline/llama-3.2-3b-cls.json: dpprof experiments/timeline.mk
	@mkdir -p $(@D)
	./dpprof run --preset llama-3.2-3b --task cls --seq 256 --batch 8 --physical-batch 2 --steps 2 \
	  --backend dry --experiment timeline --quiet --out $@

results/timeline/tiny-cpu.json: dpprof experiments/timeline.mk
	@mkdir -p $(@D)
	./dpprof run --preset tiny --seq 64 --batch 8 --physical-batch 4 --steps 3 --warmup 1 \
	  --backend cpu --experiment timeline-cpu --quiet --out $@

figures/timeline.png: results/timeline/llama-3.2-3b-cls.json dpprof
	@mkdir -p $(@D)
	./dpprof plot timeline $< --out $@

figures/timeline-cpu.png: results/timeline/tiny-cpu.json dpprof
	@mkdir -p $(@D)
	./dpprof plot timeline $< --out $@
