// messages.cpp: the graders' texts, one table per language (messages.h).
// To add a text: give it an id and write it in both tables, with the same
// {placeholders}. The Portuguese table is Brazilian Portuguese, in the terms
// of docs/pt/glossario.md (cabeça, cabeça K/V, consulta, chave, valor,
// gradiente, diferenças finitas, ...); names from the code (my_mul, keepdims,
// start, dout, batch, forward, backward) stay as they are written in it.
// A check's status word fits in 4 columns (PASS, FAIL, OK, ERRO) and a
// gradient check's case in 28, so that a table row stays within the 100
// columns of a projector in both languages.
#include "exercises/messages.h"

#include <cstdlib>
#include <stdexcept>

namespace glassllm::exercises {

namespace {

using Table = std::map<std::string, std::string, std::less<>>;

// long-function: one table, every English text of the graders.
const Table& english() {
  static const Table t{
      // grade.cpp
      {"title.1", "elementwise backward (mul, exp, silu)"},
      {"title.2", "broadcasting backward (summing back to an input's shape)"},
      {"title.3", "reductions (mean, max)"},
      {"title.4", "softmax backward"},
      {"title.5", "batched matmul backward"},
      {"title.6", "repeat_kv backward (the summed copies)"},
      {"title.7", "RMSNorm backward"},
      {"title.8", "RoPE backward"},
      {"title.9", "the K/V cache append (incremental == full)"},
      {"title.10", "grouped attention (== repeat_kv, values and gradients)"},
      {"usage", "usage: {program} N | all | list   (N from 1 to {count})"},
      {"summary", "{passed} of {run} exercises pass"},
      {"copied_tree",
       "This grader was built in {built} for the sources in {source}, but it runs from "
       "{here}.\nThe tree was copied after it was configured, so `cmake --build build` "
       "would compile the original's exercises/student/, never yours.\nConfigure the "
       "copy once, then grade:"},
      // running one exercise (grader.cpp)
      {"run.header", "Exercise {n}: {title}"},
      {"run.not_implemented", "Exercise {n}: not implemented"},
      {"run.todo", "{message} (fill in the TODOs of {file})"},
      {"run.error", "error: {message}"},
      {"run.usual", "(the usual mistakes in this exercise)"},
      {"run.hint", "hint: {text}"},
      {"run.pass", "Exercise {n} ({name}): PASS"},
      {"run.fail", "Exercise {n} ({name}): FAIL"},
      // one check's line (grader_checks.h)
      {"check.pass", "PASS"},
      {"check.fail", "FAIL"},
      {"check.shape", "shape {got}, {expected}"},
      {"check.expected_shape", "expected {shape}"},
      {"check.undefined", "undefined"},
      {"check.max_diff", "max diff {diff} (tol {tol})"},
      {"check.first_at", "; first at index {index}: expected {want}, got {got}"},
      {"check.threw", "threw: {message}"},
      {"check.used_twice", "{expr}: used twice"},
      {"check.x_used_twice", "{expr}: x used twice"},
      {"check.got", "got {seen}"},
      {"check.no_gradient", "no gradient"},
      {"word.axis", "axis"},
      // the gradient check table
      {"grad.header",
       "gradient checks (float64, eps {eps}, atol {atol}, rtol {rtol}): analytic = "
       "backward(), numeric = central differences"},
      {"grad.case", "case"},
      {"grad.input", "in"},
      {"grad.shape", "shape"},
      {"grad.worst", "worst at"},
      {"grad.analytic", "analytic"},
      {"grad.numeric", "numeric"},
      {"grad.abs", "abs err"},
      {"grad.rel", "rel err"},
      {"grad.entry",
       "-> {case}: input {input} ({name}, {shape}) at index {index}: with dout = 1 "
       "everywhere, your backward gives d{name}{index} = {analytic}, central differences "
       "of sum(f) give {numeric}"},
      {"grad.entry_weighted",
       "-> {case}: input {input} ({name}, {shape}) at index {index}: with dout = R "
       "(fixed "
       "random numbers of the output's shape, seed 0), your backward gives "
       "d{name}{index} = {analytic}, central differences of sum(f * R) give {numeric} "
       "(with dout = 1 everywhere the two agree)"},
      // exercises 1-8 (grader.cpp)
      {"ex2.scalar", "(2,3) * () scalar"},
      {"ex3.tie", "my_max tie [1,3,3]: gradient [0,0.5,0.5]"},
      {"ex6.walk", "walkthrough: dout 1,10,100,1000 per output head"},
      {"ex6.walk_detail", "x = [[1,2],[3,4]]: {got}, expected [[11,11],[1100,1100]]"},
      {"ex6.got_dx", "got dx {seen}"},
      {"ex8.position0", "(1,1,1,8) position 0 only"},
      // exercises 9 and 10 (grader_model.cpp)
      {"ex9.empty", "empty cache + 2 positions"},
      {"ex9.concat", "3 held + 2 new == concat(axis 2)"},
      {"ex9.unchanged", "held is left unchanged"},
      {"ex9.same_values", "same values"},
      {"ex9.written", "held was written"},
      {"ex9.detached", "result is detached"},
      {"ex9.requires_grad", "it requires grad: detach it (the cache is for inference)"},
      {"ex9.no_grad", "requires_grad() is false"},
      {"ex9.model", "model: incremental == full, prompt {prompt}"},
      {"ex9.length",
       "layer {layer}: the cache holds {length} positions, keys {shape}; expected "
       "{want_length}, keys {want_shape}"},
      {"ex9.entry",
       "layer {layer}, K/V head {head}, position {position}, {which}[.., {d}]: expected "
       "{want}, got {got}"},
      {"ex9.keys", "keys"},
      {"ex9.values", "values"},
      {"ex10.no_cache", "no cache: == repeat_kv path"},
      {"ex10.cache2", "cache of 2, queries at 2..4: == repeat_kv"},
      {"ex10.after", "queries after every key: == repeat_kv"},
      {"ex10.not_copied", "K and V are not copied"},
      {"ex10.copies", "the graph calls repeat_kv"},
      {"ex10.no_copies", "no repeat_kv in the graph"},
      {"ex10.grad", "q, keys, values; cache of 2"},
      {"ex10.keys", "keys"},
      {"ex10.values", "values"},
      {"ex10.logits", "model: logits == repeat_kv path"},
      {"ex10.weights", "model: {count} weight gradients == repeat_kv"},
      {"ex10.worst", ", worst {name}"},
      {"ex10.incremental", "model: incremental == full, custom path"},
      // hints.cpp
      {"hint.1.mul",
       "mul: da is dout * b and db is dout * a (each input's gradient uses the OTHER "
       "input)"},
      {"hint.1.exp",
       "exp: the derivative is the forward's output y = e^x: reuse `out`, do not take "
       "exp(dout)"},
      {"hint.1.silu",
       "silu: d/dx = s * (1 + x * (1 - s)); s alone forgets that x also multiplies s"},
      {"hint.2.keepdims",
       "sum the leading axes the target lacks first, then the length-1 axes WITH "
       "keepdims, so (4,2,3) -> (2,1) keeps its 1"},
      {"hint.2.scalar", "an input of shape () (a scalar) needs every axis summed"},
      {"hint.2.shape",
       "each input's gradient must have that input's shape: sum dout * b back to "
       "a.shape(), not to b's"},
      {"hint.3.mean",
       "mean: dx = dout / n, where n is the length of the reduced axis only"},
      {"hint.3.axis",
       "without keepdims, put the reduced axis back (length 1) before broadcasting dout "
       "over it"},
      {"hint.3.max",
       "max: only the entries equal to the max get gradient, split equally between ties"},
      {"hint.4.formula",
       "dx = y * (dout - sum(dout * y)), not dout * y * (1 - y): every output depends on "
       "every input"},
      {"hint.4.axis",
       "the sum runs along the softmax axis, with keepdims, so it broadcasts back"},
      {"hint.4.output", "use the forward's output y (softmax(x)), not x"},
      {"hint.5.transpose",
       "da = dout @ b^T and db = a^T @ dout, where ^T swaps only the LAST two axes"},
      {"hint.5.batch",
       "broadcast batch axes: sum each gradient back to its input's shape (exercise 2)"},
      {"hint.5.order", "the order matters: a^T @ dout, not dout @ a^T"},
      {"hint.6.sum",
       "each input head has n_rep copies: add all their gradients, do not keep one"},
      {"hint.6.order",
       "copies of one head are neighbours ([0,0,1,1]): reshape dout to [B, Hkv, n_rep, "
       "T, D], not [B, n_rep, Hkv, T, D] (the tiled order)"},
      {"hint.6.axis",
       "sum over the n_rep axis (2 after that reshape), not over positions"},
      {"hint.7.term",
       "dx = r * (dout - y * mean(dout * y)): the second term is the one usually lost"},
      {"hint.7.mean", "mean (divide by D), not sum, over the last axis"},
      {"hint.7.eps",
       "r = 1 / sqrt(mean(x^2) + eps): eps inside the square root, as in the forward"},
      {"hint.8.transpose",
       "the backward uses the TRANSPOSE of rotate_half: concat(g2, -g1), not "
       "concat(-g2, g1)"},
      {"hint.8.start",
       "cos and sin belong to positions start .. start+T-1: pass `start` on"},
      {"hint.8.cos",
       "dx = dout * cos + rotate_half^T(dout * sin): cos with dout, sin inside"},
      {"hint.9.axis",
       "positions are axis 2 of [B, Hkv, m, hd]: concatenate there, not on the heads "
       "(axis 1)"},
      {"hint.9.blocks",
       "the shape is right but values sit in the wrong place: in [B, Hkv, m, hd] each "
       "(b, head) block of the result holds m + T rows of hd, held's m first, then "
       "fresh's T; check where each block starts (r * (m + T) * hd) and what goes "
       "there"},
      {"hint.9.detach",
       "the result must be detached (the cache is for inference): detach() what you "
       "store"},
      {"hint.9.empty", "an undefined held means an empty cache: return fresh"},
      {"hint.10.fold",
       "fold q so that row g*T + t of K/V head i is query head i*G + g (heads of a group "
       "are neighbours), not g*Hkv + i"},
      {"hint.10.mask",
       "in the folded rows the query position is query_start + (row mod T), not the row "
       "number: mask with that"},
      {"hint.10.scale",
       "scale the scores by 1/sqrt(hd) (head_dim, not d_model), and unfold back to [B, "
       "H, T, hd]"},
      {"hint.10.copies", "fold the queries instead of repeating K and V: no repeat_kv"},
  };
  return t;
}

// long-function: one table, every Brazilian Portuguese text of the graders.
const Table& portuguese() {
  static const Table t{
      {"title.1", "backward elemento a elemento (mul, exp, silu)"},
      {"title.2", "backward com broadcasting (somar de volta à forma de uma entrada)"},
      {"title.3", "reduções (mean, max)"},
      {"title.4", "backward do softmax"},
      {"title.5", "backward do matmul em lote"},
      {"title.6", "backward de repeat_kv (as cópias somadas)"},
      {"title.7", "backward da RMSNorm"},
      {"title.8", "backward da RoPE"},
      {"title.9", "o append do cache K/V (incremental == completo)"},
      {"title.10", "atenção agrupada (== repeat_kv, valores e gradientes)"},
      {"usage", "uso: {program} N | all | list   (N de 1 a {count})"},
      {"summary", "{passed} de {run} exercícios passam"},
      {"copied_tree",
       "Este corretor foi compilado em {built} para os fontes em {source}, mas está "
       "rodando em {here}.\nA árvore foi copiada depois de configurada, então `cmake "
       "--build build` compilaria o exercises/student/ da original, nunca o seu.\n"
       "Configure a cópia uma vez e depois corrija:"},
      {"run.header", "Exercício {n}: {title}"},
      {"run.not_implemented", "Exercício {n}: não implementado"},
      {"run.todo", "{message} (complete os TODOs de {file})"},
      {"run.error", "erro: {message}"},
      {"run.usual", "(os erros mais comuns neste exercício)"},
      {"run.hint", "dica: {text}"},
      {"run.pass", "Exercício {n} ({name}): PASSOU"},
      {"run.fail", "Exercício {n} ({name}): FALHOU"},
      {"check.pass", "OK"},
      {"check.fail", "ERRO"},
      {"check.shape", "forma {got}, {expected}"},
      {"check.expected_shape", "esperada {shape}"},
      {"check.undefined", "indefinida"},
      {"check.max_diff", "dif. máx. {diff} (tol {tol})"},
      {"check.first_at", "; primeira no índice {index}: esperado {want}, obtido {got}"},
      {"check.threw", "lançou exceção: {message}"},
      {"check.used_twice", "{expr}: dois usos"},
      {"check.x_used_twice", "{expr}: x com dois usos"},
      {"check.got", "obtido {seen}"},
      {"check.no_gradient", "sem gradiente"},
      {"word.axis", "eixo"},
      {"grad.header",
       "verificações de gradiente (float64, eps {eps}, atol {atol}, rtol {rtol}): "
       "analítico = backward(), numérico = diferenças centrais"},
      {"grad.case", "caso"},
      {"grad.input", "ent"},
      {"grad.shape", "forma"},
      {"grad.worst", "pior em"},
      {"grad.analytic", "analítico"},
      {"grad.numeric", "numérico"},
      {"grad.abs", "err abs"},
      {"grad.rel", "err rel"},
      {"grad.entry",
       "-> {case}: entrada {input} ({name}, {shape}) no índice {index}: com dout = 1 em "
       "toda parte, o seu backward dá d{name}{index} = {analytic}, as diferenças "
       "centrais "
       "de sum(f) dão {numeric}"},
      {"grad.entry_weighted",
       "-> {case}: entrada {input} ({name}, {shape}) no índice {index}: com dout = R "
       "(números aleatórios fixos com a forma da saída, semente 0), o seu backward dá "
       "d{name}{index} = {analytic}, as diferenças centrais de sum(f * R) dão {numeric} "
       "(com dout = 1 em toda parte os dois concordam)"},
      {"ex2.scalar", "(2,3) * () escalar"},
      {"ex3.tie", "my_max empate [1,3,3]: gradiente [0,0.5,0.5]"},
      {"ex6.walk", "exemplo guiado: dout 1,10,100,1000 por cabeça de saída"},
      {"ex6.walk_detail", "x = [[1,2],[3,4]]: {got}, esperado [[11,11],[1100,1100]]"},
      {"ex6.got_dx", "obtido dx {seen}"},
      {"ex8.position0", "(1,1,1,8) só a posição 0"},
      {"ex9.empty", "cache vazio + 2 posições"},
      {"ex9.concat", "3 guardadas + 2 novas == concat(eixo 2)"},
      {"ex9.unchanged", "held não é alterado"},
      {"ex9.same_values", "mesmos valores"},
      {"ex9.written", "held foi modificado"},
      {"ex9.detached", "o resultado está fora do grafo"},
      {"ex9.requires_grad",
       "ele exige gradiente: aplique detach() (o cache é para inferência)"},
      {"ex9.no_grad", "requires_grad() é false"},
      {"ex9.model", "modelo: incremental == completo, prompt {prompt}"},
      {"ex9.length",
       "camada {layer}: o cache guarda {length} posições, chaves {shape}; esperado "
       "{want_length}, chaves {want_shape}"},
      {"ex9.entry",
       "camada {layer}, cabeça K/V {head}, posição {position}, {which}[.., {d}]: "
       "esperado {want}, obtido {got}"},
      {"ex9.keys", "chaves"},
      {"ex9.values", "valores"},
      {"ex10.no_cache", "sem cache: == caminho repeat_kv"},
      {"ex10.cache2", "cache de 2, consultas em 2..4: == repeat_kv"},
      {"ex10.after", "consultas depois de todas as chaves: == repeat_kv"},
      {"ex10.not_copied", "K e V não são copiados"},
      {"ex10.copies", "o grafo chama repeat_kv"},
      {"ex10.no_copies", "nenhum repeat_kv no grafo"},
      {"ex10.grad", "q/chaves/valores; cache de 2"},
      {"ex10.keys", "chaves"},
      {"ex10.values", "valores"},
      {"ex10.logits", "modelo: logits == caminho repeat_kv"},
      {"ex10.weights", "modelo: {count} gradientes dos pesos == repeat_kv"},
      {"ex10.worst", ", pior {name}"},
      {"ex10.incremental", "modelo: incremental == completo, caminho custom"},
      {"hint.1.mul",
       "mul: da é dout * b e db é dout * a (o gradiente de cada entrada usa a OUTRA "
       "entrada)"},
      {"hint.1.exp",
       "exp: a derivada é a própria saída do forward, y = e^x: reaproveite `out`, não "
       "calcule exp(dout)"},
      {"hint.1.silu",
       "silu: d/dx = s * (1 + x * (1 - s)); usar só s esquece que x também multiplica s"},
      {"hint.2.keepdims",
       "some primeiro os eixos iniciais que faltam no alvo, depois os eixos de tamanho 1 "
       "COM keepdims, para que (4,2,3) -> (2,1) mantenha o seu 1"},
      {"hint.2.scalar",
       "uma entrada de forma () (um escalar) precisa somar todos os eixos"},
      {"hint.2.shape",
       "o gradiente de cada entrada precisa ter a forma dessa entrada: some dout * b de "
       "volta para a.shape(), não para a forma de b"},
      {"hint.3.mean", "mean: dx = dout / n, em que n é só o tamanho do eixo reduzido"},
      {"hint.3.axis",
       "sem keepdims, recoloque o eixo reduzido (com tamanho 1) antes de espalhar dout "
       "sobre ele por broadcasting"},
      {"hint.3.max",
       "max: só as entradas iguais ao máximo recebem gradiente, dividido igualmente "
       "entre "
       "os empates"},
      {"hint.4.formula",
       "dx = y * (dout - sum(dout * y)), e não dout * y * (1 - y): cada saída depende de "
       "todas as entradas"},
      {"hint.4.axis",
       "a soma corre ao longo do eixo do softmax, com keepdims, para voltar por "
       "broadcasting"},
      {"hint.4.output", "use a saída y do forward (softmax(x)), não x"},
      {"hint.5.transpose",
       "da = dout @ b^T e db = a^T @ dout, em que ^T troca só os DOIS ÚLTIMOS eixos"},
      {"hint.5.batch",
       "eixos de batch com broadcasting: some cada gradiente de volta à forma da sua "
       "entrada (exercício 2)"},
      {"hint.5.order", "a ordem importa: a^T @ dout, não dout @ a^T"},
      {"hint.6.sum",
       "cada cabeça de entrada tem n_rep cópias: some os gradientes de todas, não fique "
       "com uma só"},
      {"hint.6.order",
       "as cópias de uma cabeça são vizinhas ([0,0,1,1]): faça o reshape de dout para "
       "[B, "
       "Hkv, n_rep, T, D], não [B, n_rep, Hkv, T, D] (a ordem intercalada)"},
      {"hint.6.axis",
       "some sobre o eixo n_rep (o eixo 2 depois desse reshape), não sobre as posições"},
      {"hint.7.term",
       "dx = r * (dout - y * mean(dout * y)): o segundo termo é o que costuma se perder"},
      {"hint.7.mean", "média (divida por D), não soma, sobre o último eixo"},
      {"hint.7.eps",
       "r = 1 / sqrt(mean(x^2) + eps): eps dentro da raiz quadrada, como no forward"},
      {"hint.8.transpose",
       "o backward usa a TRANSPOSTA de rotate_half: concat(g2, -g1), não concat(-g2, "
       "g1)"},
      {"hint.8.start",
       "cos e sin pertencem às posições start .. start+T-1: repasse `start`"},
      {"hint.8.cos",
       "dx = dout * cos + rotate_half^T(dout * sin): cos junto de dout, sin lá dentro"},
      {"hint.9.axis",
       "as posições são o eixo 2 de [B, Hkv, m, hd]: concatene ali, não nas cabeças "
       "(eixo 1)"},
      {"hint.9.blocks",
       "a forma está certa, mas os valores estão no lugar errado: em [B, Hkv, m, hd] "
       "cada bloco (b, cabeça) do resultado guarda m + T linhas de hd, primeiro as m de "
       "held, depois as T de fresh; confira onde cada bloco começa (r * (m + T) * hd) e "
       "o que vai ali"},
      {"hint.9.detach",
       "o resultado precisa ficar fora do grafo (o cache é para inferência): aplique "
       "detach() ao que você guarda"},
      {"hint.9.empty", "um held indefinido significa cache vazio: devolva fresh"},
      {"hint.10.fold",
       "dobre q de modo que a linha g*T + t da cabeça K/V i seja a cabeça de consulta "
       "i*G + g (as cabeças de um grupo são vizinhas), e não g*Hkv + i"},
      {"hint.10.mask",
       "nas linhas dobradas, a posição da consulta é query_start + (linha mod T), não o "
       "número da linha: aplique a máscara causal com ela"},
      {"hint.10.scale",
       "escale os scores por 1/sqrt(hd) (head_dim, não d_model) e desdobre de volta para "
       "[B, H, T, hd]"},
      {"hint.10.copies", "dobre as consultas em vez de repetir K e V: nada de repeat_kv"},
  };
  return t;
}

bool starts_with_pt(const char* value) {
  return value[0] == 'p' && value[1] == 't';
}

bool set(const char* value) {
  return value != nullptr && value[0] != '\0';
}

}  // namespace

Language language_from(const char* glassllm_lang, const char* lc_all,
                       const char* lc_messages, const char* lang) {
  // The first one set decides, as for the C library's LC_MESSAGES category;
  // GLASSLLM_LANG comes before them all.
  for (const char* value : {glassllm_lang, lc_all, lc_messages, lang})
    if (set(value)) return starts_with_pt(value) ? Language::pt : Language::en;
  return Language::en;
}

Language current_language() {
  return language_from(std::getenv("GLASSLLM_LANG"), std::getenv("LC_ALL"),
                       std::getenv("LC_MESSAGES"), std::getenv("LANG"));
}

const Table& message_table(Language language) {
  return language == Language::pt ? portuguese() : english();
}

std::string tr(Language language, std::string_view id, MessageArgs args) {
  const Table& table = message_table(language);
  auto found = table.find(id);
  if (found == table.end())
    throw std::logic_error("no grader message '" + std::string(id) + "'");
  const std::string& text = found->second;
  std::string out;
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t close = text[i] == '{' ? text.find('}', i) : std::string::npos;
    if (close == std::string::npos) {
      out += text[i++];
      continue;
    }
    const std::string_view name(text.data() + i + 1, close - i - 1);
    const std::pair<std::string_view, std::string>* arg = nullptr;
    for (const auto& a : args)
      if (a.first == name) arg = &a;
    if (!arg)
      throw std::logic_error("grader message '" + std::string(id) + "' needs {" +
                             std::string(name) + "}");
    out += arg->second;
    i = close + 1;
  }
  return out;
}

std::string tr(std::string_view id, MessageArgs args) {
  return tr(current_language(), id, args);
}

}  // namespace glassllm::exercises
