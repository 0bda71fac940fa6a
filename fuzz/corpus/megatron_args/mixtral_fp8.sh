pretrain_gpt.py --num-layers 32 --hidden-size 4096 --ffn-hidden-size 14336 --num-attention-heads 32 \
  --group-query-attention --num-query-groups 8 --swiglu --untie-embeddings-and-output-weights \
  --seq-length 4096 --max-position-embeddings 32768 --vocab-size 32000 \
  --num-experts 8 --moe-router-topk 2 --moe-grouped-gemm --moe-token-dispatcher-type alltoall \
  --expert-model-parallel-size 8 --tensor-model-parallel-size 1 --pipeline-model-parallel-size 4 \
  --micro-batch-size 1 --global-batch-size 256 --bf16 --fp8-format hybrid \
  --recompute-activations --tp-comm-overlap
