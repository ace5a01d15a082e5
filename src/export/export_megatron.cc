// Megatron-LM arguments (pretrain_gpt.py), and the torchrun command and Slurm batch script that
// launch them. Argument spellings: megatron/training/arguments.py (the model-shape arguments
// ModelFromMegatronShape reads; the strategy arguments of the schema, FormatMegatronArgs).
// torchrun options: PyTorch "torchrun (Elastic Launch)" docs (--nnodes, --nproc-per-node,
// --rdzv-backend c10d, --rdzv-endpoint host:port, --rdzv-id, --standalone). Slurm: sbatch(1)
// (--nodes, --ntasks-per-node, --gpus-per-node, --exclusive); one torchrun per node via srun.
#include <string>
#include <vector>

#include "export/export_internal.h"
#include "trainsim/megatron.h"

namespace trainsim {
namespace {

void Arg(std::string& out, const std::string& flag, long long v) {
  out += " " + flag + " " + std::to_string(v);
}

// --moe-layer-freq as the Python list expression Megatron-LM evaluates: the leading dense layers,
// then one MoE layer every layer_freq layers ("[0]*3+[1]*58", "[1,0]*24").
std::string MoeLayerFreq(const ModelSpec& m) {
  const MoeSpec& e = m.moe;
  if (e.first_k_dense == 0 && e.layer_freq <= 1) return "";
  std::string expr;
  if (e.first_k_dense > 0) expr = "[0]*" + std::to_string(e.first_k_dense);
  const int rest = m.layers - e.first_k_dense, f = std::max(1, e.layer_freq);
  std::string period = "[1";
  for (int i = 1; i < f; ++i) period += ",0";
  period += "]";
  if (rest / f > 0) expr += (expr.empty() ? "" : "+") + period + "*" + std::to_string(rest / f);
  if (rest % f > 0) {
    std::string tail = "[1";
    for (int i = 1; i < rest % f; ++i) tail += ",0";
    expr += (expr.empty() ? "" : "+") + tail + "]";
  }
  return " --moe-layer-freq '" + expr + "'";
}

void MoeArgs(const ModelSpec& m, std::string& out, std::vector<std::string>& notes) {
  if (m.mtp_layers > 0) Arg(out, "--mtp-num-layers", m.mtp_layers);
  if (!m.is_moe()) return;
  Arg(out, "--num-experts", m.moe.num_experts);
  Arg(out, "--moe-router-topk", m.moe.top_k);
  Arg(out, "--moe-ffn-hidden-size", m.moe.expert_ffn);
  if (m.moe.shared_ffn > 0) Arg(out, "--moe-shared-expert-intermediate-size", m.moe.shared_ffn);
  out += MoeLayerFreq(m);
  if (m.moe.dense_ffn > 0 && m.moe.dense_ffn != m.ffn)
    notes.push_back("dense-layer MLP size " + std::to_string(m.moe.dense_ffn) +
                    " (Megatron-LM's --ffn-hidden-size is one size for every dense MLP)");
}

void AttentionArgs(const ModelSpec& m, std::string& out, std::vector<std::string>& notes) {
  Arg(out, "--num-attention-heads", m.heads);
  if (m.kv_heads != m.heads) {
    out += " --group-query-attention";
    Arg(out, "--num-query-groups", m.kv_heads);
  }
  if (m.heads > 0 && m.head_dim != m.hidden / m.heads) Arg(out, "--kv-channels", m.head_dim);
  if (m.qk_norm) out += " --qk-layernorm";
  if (m.is_mla()) {
    out += " --multi-latent-attention";
    if (m.mla.q_lora_rank > 0) Arg(out, "--q-lora-rank", m.mla.q_lora_rank);
    Arg(out, "--kv-lora-rank", m.mla.kv_lora_rank);
    Arg(out, "--qk-head-dim", m.mla.qk_nope_head_dim);
    Arg(out, "--qk-pos-emb-head-dim", m.mla.qk_rope_head_dim);
    Arg(out, "--v-head-dim", m.mla.v_head_dim);
  }
  if (m.attention.window > 0)
    notes.push_back("sliding-window attention of " + std::to_string(m.attention.window) +
                    " tokens (Megatron-LM --window-size is not written; check it by hand)");
  if (m.attention.document_masking)
    notes.push_back(
        "document masking (packed sequences: Megatron-LM's --reset-attention-mask "
        "and THD data are set up with the data, not here)");
}

// Splits an argument string into lines "--flag value ...", one argument each; single-quoted
// values stay whole.
std::string ArgLines(const std::string& args, const std::string& indent) {
  std::vector<std::string> lines;
  bool quoted = false;
  std::string word;
  auto flush = [&] {
    if (word.empty()) return;
    if (word.rfind("--", 0) == 0 || lines.empty())
      lines.push_back(word);
    else
      lines.back() += " " + word;
    word.clear();
  };
  for (char c : args) {
    if (c == '\'') quoted = !quoted;
    if (c == ' ' && !quoted) {
      flush();
      continue;
    }
    word += c;
  }
  flush();
  std::string out;
  for (size_t i = 0; i < lines.size(); ++i)
    out += indent + lines[i] + (i + 1 < lines.size() ? " \\\n" : "\n");
  return out;
}

// The arguments, and the notes of what they do not carry (read back with ApplyMegatronArgs).
Result<std::string> MegatronArgsAndNotes(const ModelSpec& m, const Strategy& strategy,
                                         std::vector<std::string>& notes) {
  // An uneven split that --account-for-embedding/loss-in-pipeline-split cannot give (Megatron-
  // Core divides num_layers + 2 evenly over pp x vpp chunks and does not count MTP modules,
  // get_num_layers_to_build; it refuses the rest) is written as the layout of trainsim's split.
  Strategy s = strategy;
  if (s.uneven_pipeline && s.pp > 1 && s.pipeline_layout.empty() && s.first_stage_layers == 0 &&
      s.last_stage_layers == 0 && ((m.layers + 2) % (s.pp * s.vpp) != 0 || m.mtp_layers > 0)) {
    s.pipeline_layout =
        PipelineLayoutOfChunks(PipelineChunkLayers(s, m.layers, m.mtp_layers), m.mtp_layers);
    s.uneven_pipeline = false;
  }
  std::string args = MegatronModelArgs(m, notes) + " " + FormatMegatronArgs(s);
  // The MoE switches whose absence means off in Megatron-LM (the strategy rows write nothing).
  if (m.is_moe() && s.moe_grouped_gemm) args += " --moe-grouped-gemm";
  if (m.is_moe() && s.moe_permute_fusion) args += " --moe-permute-fusion";
  Strategy back = export_detail::ReaderBase(s);
  if (Status st = ApplyMegatronArgs(args, back); !st.ok())
    return st.WithContext("exported Megatron-LM arguments");
  export_detail::DiffNotes(s, NormaliseStrategy(back), {}, notes);
  return args;
}

}  // namespace

std::string MegatronModelArgs(const ModelSpec& m, std::vector<std::string>& notes) {
  std::string out;
  Arg(out, "--num-layers", m.layers);
  Arg(out, "--hidden-size", m.hidden);
  Arg(out, "--ffn-hidden-size", m.ffn);
  AttentionArgs(m, out, notes);
  if (m.gated_mlp) out += " --swiglu";
  if (!m.layernorm) out += " --normalization RMSNorm";
  if (!m.tied_embeddings) out += " --untie-embeddings-and-output-weights";
  if (!m.linear_bias) out += " --disable-bias-linear";
  if (m.qkv_bias) out += " --add-qkv-bias";
  if (m.learned_pos_emb > 0)
    Arg(out, "--max-position-embeddings", m.learned_pos_emb);
  else
    out += " --position-embedding-type rope";
  if (!m.dropout) out += " --attention-dropout 0 --hidden-dropout 0";
  Arg(out, "--vocab-size", m.vocab);
  MoeArgs(m, out, notes);
  return out.substr(1);
}

namespace export_detail {

Result<ExportFile> ExportMegatron(const ModelSpec& m, const Strategy& s) {
  ExportFile f;
  auto args = MegatronArgsAndNotes(m, s, f.notes);
  if (!args.ok()) return args.status();
  f.text = Header(ExportFormat::kMegatron, m, s, "# ") +
           "# Megatron-LM pretrain_gpt.py arguments; the " + std::to_string(s.world_size) +
           " GPUs come from the launcher (--format torchrun or slurm)\n" +
           NoteLines(f.notes, "Megatron-LM arguments", "# ") + ArgLines(args.value(), "");
  return f;
}

Result<ExportFile> ExportLaunch(ExportFormat fmt, const ModelSpec& m, const Strategy& s,
                                const ExportTarget& t) {
  const int gpn = t.gpus_per_node;
  if (gpn < 1 || s.world_size % gpn != 0)
    return Status::Invalid("gpus-per-node", "must divide the GPU count (" +
                                                std::to_string(s.world_size) + "), got " +
                                                std::to_string(gpn));
  const int nodes = s.world_size / gpn;
  ExportFile f;
  auto args = MegatronArgsAndNotes(m, s, f.notes);
  if (!args.ok()) return args.status();
  const std::string per_node = std::to_string(gpn), n = std::to_string(nodes);
  std::string launcher;
  std::string text;
  if (fmt == ExportFormat::kSlurm) {
    text = "#!/bin/bash\n#SBATCH --job-name=trainsim-" + m.name + "\n#SBATCH --nodes=" + n +
           "\n#SBATCH --ntasks-per-node=1\n#SBATCH --gpus-per-node=" + per_node +
           "\n#SBATCH --exclusive\n" + Header(fmt, m, s, "# ") +
           NoteLines(f.notes, "Megatron-LM arguments", "# ") +
           "MASTER_ADDR=$(scontrol show hostnames \"$SLURM_JOB_NODELIST\" | head -n 1)\n";
    launcher = "srun torchrun --nnodes " + n + " --nproc-per-node " + per_node +
               " --rdzv-id \"$SLURM_JOB_ID\" --rdzv-backend c10d --rdzv-endpoint "
               "\"$MASTER_ADDR:29500\"";
  } else {
    text = Header(fmt, m, s, "# ") + NoteLines(f.notes, "Megatron-LM arguments", "# ");
    launcher = nodes == 1 ? "torchrun --standalone --nnodes 1 --nproc-per-node " + per_node
                          : "torchrun --nnodes " + n + " --nproc-per-node " + per_node +
                                " --rdzv-id \"${RDZV_ID:-trainsim}\" --rdzv-backend c10d "
                                "--rdzv-endpoint \"${MASTER_ADDR:-localhost}:${MASTER_PORT:-"
                                "29500}\"";
    if (nodes > 1) text += "# run once on each of the " + n + " nodes, with MASTER_ADDR set\n";
  }
  f.text = text + launcher + " \\\n  pretrain_gpt.py \\\n" + ArgLines(args.value(), "  ");
  return f;
}

}  // namespace export_detail
}  // namespace trainsim
