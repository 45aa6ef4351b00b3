"""An independent scan for host syncs in training code, to measure TL003's recall.

It shares nothing with torchlint's analyses: plain `ast` heuristics find *training
scopes* (a `training_step`/`train_step`/`compute_loss`-like function, the `forward` of a
`...Loss`/`...Criterion` class or a function named `...loss...`, a function that calls
`.backward()` or `<optimizer>.step()` outside a loop, and the body of any loop that does), then every candidate sync inside them
(nested functions and classes are not entered):

    item      `x.item()`                 tolist   `x.tolist()`
    numpy     `x.numpy()`                cpu      `x.cpu()`
    sync      `torch.cuda.synchronize()` number   `float(x)` / `int(x)` / `bool(x)` of a call,
                                                  attribute or subscript (not `len`, shapes)
    branch    `if` / `while` on `.any()`, `.all()`, `torch.isnan/isinf/isfinite/equal`
    print     `print(...)` of something other than string literals

    python bench/tl003_recall.py scan DIR [DIR ...]            # candidates, JSON lines
    python bench/tl003_recall.py sample FILE.jsonl N SEED      # a seeded sample, N per package
    python bench/tl003_recall.py recall JUDGED.jsonl DIR ...   # TL003 / TL005 on the true ones

`recall` runs `torchlint check --select TL003,TL005` twice on each directory (the
defaults, and with the options that widen both rules, `ALL_OPTIONS`) and counts a judged
true sync as found when a finding of either rule spans its line. The judged sample must
carry `verdict` (see `IN_SCOPE`) and `why` (the form, to group the misses).

bench/tl003_recall_judged.jsonl is the sample judged in session 5 (seed 31, 12 hits per
package of pinned releases unpacked under /tmp: avalanche-lib 0.6.0, d3rlpy 2.8.1,
open_clip_torch 3.3.0, pyannote.audio 4.0.7, pykeen 1.11.1, pytorch-forecasting 1.8.0,
sentence-transformers 6.3.0, skorch 1.4.0, torchgeo 0.8.1, torchmetrics 1.9.0, torchrl
0.14.1; each unpacked into a directory named `<dist>-<version>` as `root` says).
bench/tl003_recall_judged_seed61.jsonl was judged on 2026-12-03 by a helper that never ran
torchlint nor read its rules (seed 61, 8 hits per package: catalyst 22.4, mosaicml 0.32.1,
neuralforecast 3.3.0, poutyne 1.19.0, pytorch-metric-learning 2.9.0, pytorch-widedeep 1.7.0,
none used before); it was scored before any change made from it (5/15 TL003 or TL005), and
its misses were then read, so the next independent measure needs a fresh sample.
bench/tl003_recall_judged_seed73.jsonl was judged on 2026-12-04 the same way (seed 73, 8 hits per
package: allennlp 2.10.1, lightning_bolts 0.7.0, ludwig 0.11.0, mmengine 0.10.7, pfrl 0.4.0,
sb3_contrib 2.9.2, skrl 2.1.1, none used before) and scored before any change made from it:
TL003 or TL005 10/22 by default, 35/38 with `ALL_OPTIONS`; after the recorders and the
other-framework gate its misses led to (commit 1f11141), 15/22 and 35/38, no longer independent.
bench/tl003_recall_judged_seed89.jsonl was judged on 2026-12-04 the same way after those changes (seed 89,
12 hits per package where there were as many: fastai 2.8.12, flair 0.15.1, gluonts 0.17.0,
pytorch_accelerated 0.1.61, pytorch_tabnet 4.1.0, rl_games 1.6.5, torchtune 0.6.1, none used before) and
scored before any change made from it: TL003 or TL005 4/10 by default, 8/18 with `ALL_OPTIONS`; after the
optimizer-step branch its misses led to, 6/10 and 8/18 (and seed 73: 16/22 and 35/38); after the base
class's loop whose hook a subclass overrides with the step, and the helpers an override calls on `self`
(commits 203e840 and the next), 8/10 and 10/18 (seed 73 unchanged). `ALL_OPTIONS` gained TL005's
check-periodic-branches and check-loop-exits on that day (it had left them out); the figures above are with them.
bench/tl003_recall_judged_seed97.jsonl was judged on 2026-12-05 the same way (seed 97, 14 hits per package
where there were as many: tianshou 2.0.1, pytorch-ignite 0.5.5, speechbrain 1.1.2, lightly 1.6.0,
pytorch-tabular 1.2.0, mmdet 3.3.0, asteroid 0.7.0 (no candidate), openrlhf 0.11.2 (its sources under
`openrlhf-0.11.2.data/purelib/`), none used before; 48 `sync`) and scored before any change made from it:
TL003 or TL005 25/48 by default, 29/53 with `ALL_OPTIONS`. After the changes its misses led to (a module's
loss methods and loss functions that no code of the tree calls, mmengine's and the other libraries' module
bases, a loop over data with repeated updates in a counting loop, a number both summed and logged): 39/48
and 44/53. The nine default misses left are what the rules leave to options or skip by design: a second
read of a tensor already read on the host (4), `int()` of a size (3, and `lens` is no evident tensor), a
`.cpu()` copy (1), a number stored on another object's attribute (1).
bench/tl003_recall_judged_seed101.jsonl was judged on 2026-12-05 the same way (seed 101, 12 hits per package
where there were as many: sample-factory 2.1.1, elegantrl 0.3.6, mmpretrain 1.2.0, torchensemble 0.2.0,
pytorch-adapt 0.0.83, litgpt 0.5.13, lightning-uq-box 0.2.0, none used before; setfit, k-diffusion, mmpose and
torchbearer were fetched but had no candidate; 17 `sync`) and scored before any change: TL003 or TL005 12/17 by
default, 37/45 with `ALL_OPTIONS`. The default misses: two losses read after an update loop in agents no code
of the package calls (elegantrl's VMPO and REDQ), two reads in a loss weighter that a hook reaches through an
attribute set by a factory (pytorch-adapt), a `.cpu()` copy (sample-factory).
bench/tl003_recall_judged_seed103.jsonl was judged on 2026-12-05 the same way (seed 103, 12 hits per package
where there were as many: recbole 1.2.1, mmaction2 1.2.0, mmyolo 0.6.0, torchreid 0.2.5, cleanrl 0.4.8, deepxde
1.15.0, torchkge 0.17.7, mmselfsup 1.0.0, mmflow 0.5.2, garage 2021.3.0, none used before; 28 `sync`) and scored
on 2026-12-06 before any change made from it: TL003 or TL005 19/28 by default, 31/34 with `ALL_OPTIONS`. After
the changes its misses led to (a sum started on the first step, `total = x.item() if total is None else total +
x.item()`; the project's logging routine, `self._log_performance(...)`; OpenMMLab's `train_step` of a module):
25/28 and 33/34. The default misses left: a tuple of per-part losses summed with `map(sum, zip(...))` (2) and a
`.cpu()` copy in a loss (torchreid, TL005's `check-cpu-copies`).
bench/tl003_recall_judged_seed107.jsonl was judged on 2026-12-06 the same way after those changes (seed 107, 12 hits
per package where there were as many: agilerl 2.58.0, cebra 0.6.1, ctgan 0.12.1, deepctr-torch 0.3.0, mushroom-rl
1.10.2, pykt-toolkit 0.0.38, pythae 0.1.2, scvi-tools 1.4.2, textbrewer 0.2.1.post1, torch-rechub 0.9.0, none used
before; 47 `sync`) and scored at commit c798826 before any change made from it: TL003 or TL005 36/47 (76.6 %) by
default, 52/59 (88.1 %) with `ALL_OPTIONS`. The default misses: the update methods of RL agents and bandits that only
code outside the tree calls (`TD3.learn`, `MADDPG._learn_individual`, `NeuralUCB.learn`, `TRPO.fit`: 4), a second
read of a loss (2), a count read per unique value in a loss (`int(b.item())`, 2), a list of per-task losses summed
into a NumPy array, a statistic of advantages, a gradient's `.cpu()` copy. After the change its misses led to (a
number that a step no code of its file calls records and returns: `TD3.learn`, `NeuralUCB.learn`), agilerl and
mushroom-rl, fetched again, went from 2/8 to 4/8 by default (the other packages were not fetched again): at least
38/47.
bench/tl003_recall_judged_seed113.jsonl was judged on 2026-12-06 the same way (seed 113, 12 hits per package where
there were as many: audiocraft 1.3.0, fairseq 0.12.2, imitation 1.0.1, monai 1.6.1, nerfstudio 1.1.5, pyod 3.6.7,
pypots 1.5, torch-uncertainty 0.13.0, none used before; segmentation-models-pytorch 0.6.0 and solo-learn 1.0.2 had
no candidate; 25 `sync`) and scored before any change made from it: TL003 or TL005 17/25 (68 %) by default, 26/30
(86.7 %) with `ALL_OPTIONS`. The default misses: reads in losses the rule does not reach or takes for host values
(a target length per batch element, a count of correct predictions, a focal loss's scalar `alpha_t`, SURE's `eps`),
a `.cpu().numpy()` of a reward net's output, a metrics dict's GPU sum read with `int()`, a loss returned from a
step with no caller in the file and not recorded there, a `.cpu()` copy once per epoch.
bench/tl003_recall_judged_seed127.jsonl, _seed131 and _seed137 were judged on 2026-12-06 the same way, each by a
helper that never ran torchlint nor read its rules or the other samples, and each scored at the head of its day
before any change made from it. Seed 127 (DI-engine 0.5.3, espnet 202511, simpletransformers 0.70.8, yolov5 7.0.14,
denoising-diffusion-pytorch 2.3.4, nnunetv2 2.8.1, mmocr 1.0.1, deepchem 2.8.0, chemprop 2.3.1; 31 `sync`), at
0f0b9f6: 23/31 (74.2 %) by default, 32/37 (86.5 %) with `ALL_OPTIONS`. Seed 131 (OpenNMT-py 3.5.1, chgnet 0.4.2,
deepspeed 0.19.8, nemo-toolkit 3.0.0, pyro-ppl 1.9.2, s3prl 0.4.18, stanza 1.15.0, machin 0.4.2, vissl 0.1.6; 50
`sync`), at e6ba204: 27/50 (54 %) and 51/58 (87.9 %). Seed 137 (audiolm-pytorch 2.4.0, colbert-ai 0.2.22,
fairchem-core 2.24.0, funasr 1.4.16, libauc 2.0.1, mmagic 1.2.0, mmdet3d 1.4.0, torchrec 1.9.2, tsai 1.0.1; 38
`sync`), at 7563d92: 22/38 (57.9 %) and 45/60 (75 %). After the changes their misses led to (TL005's NaN tests of
`clip_grad_norm_`'s norm and a loss's counts; a training step called from other files that returns its number; data
read through `enumerate`; TL005's `.cpu()` copies by default): seed 127 25/31, seed 131 34/50, seed 137 30/38, no
longer independent. The default misses left are mostly values the host needs (a returned number whose step also
has callers here, a `.numpy()` for host code, a TRPO step size), reads in code the rules do not reach (mmagic's
inpaintors' results dicts, stanza's `update`, which a `Counter.update` call in its file makes look called there),
and checks whose block only reports (`if math.isnan(grad_norm): print(...)`, TL005's `check-error-paths`).
bench/tl003_recall_judged_seed149.jsonl was judged on 2026-12-07 the same way, by a helper that never ran torchlint
nor read its rules or the other samples (seed 149, 12 hits per package where there were as many: cogdl 0.6, cornac
3.0.1, d2l 1.0.3, dalle2-pytorch 1.15.6, learn2learn 0.2.0, llamafactory 0.9.5, mbrl 0.2.0, mlagents 0.28.0, opacus
1.6.0, torchgan 0.1.0, none used before; 69 `sync`), and scored at 8992a31 before any change made from it: TL003 or
TL005 50/69 (72.5 %) by default, 62/80 (77.5 %) with `ALL_OPTIONS`. After the changes its misses led to (a method of
an object the class's `__init__` builds, reached from a step function: ml-agents' GAIL discriminator; a loop over
the optimizers inside the batch loop; `get_batch_loss_metrics` of trl's preference trainers; a number formatted
with `str.format` for `print`; a NumPy copy summed into a running total): 63/69 (91.3 %) and 76/80, no longer
independent. The default misses left: a batch skipped on a device test (`if mask.sum().item() == 0: continue`),
`%`-formatting of tensors in a `print` of a loss method reached through a model handed to a wrapper in another
file, a `.numpy()` for NumPy's `argmax`, a registered step buffer read as the step count, numbers a GAN loss hands
to its own `update_k`, and a returned number whose method name a `super().train_ops(...)` in the file also calls.
bench/tl003_recall_judged_seed151.jsonl was judged on 2026-12-07 the same way, after those changes (seed 151, 12 hits per
package where there were as many: anomalib 2.7.0, baal 2.1.0, colossalai 0.5.0, coqui-tts 0.28.0, f5-tts 1.1.22,
lightly-train 0.18.0, rllte-core 1.0.1, snntorch 1.0.0, spikingjelly 2.0.0, torchtitan 0.3.0, none used before; 53
`sync`; the directories are named as the wheels spell the distribution, `coqui_tts-0.28.0`), and scored at bb34958
before any change made from it: TL003 or TL005 28/53 (52.8 %) by default, 46/75 (61.3 %) with `ALL_OPTIONS`. The
default misses: `loss.item()` given to `self.log(..., prog_bar=True)` in a LightningModule's `training_step` (8, all
anomalib; left out by design: the progress bar reads the value on every batch anyway), a registered buffer read as
the fitting stage (anomalib), the `update` of a project's
own metric classes (baal's `Metrics`, whose `.cpu()` copies and reads run on every step where a metric is added: 7),
a mixed-precision optimizer's `loss_scale` property and GradScaler internals (colossalai: 4), a pipeline stage's
loss, counts read in a detection loss helper (`_compute_losses`, not named as a loss), a branch on an all-reduced
flag, and a clipped gradient norm read as a float in a step.
After the changes its misses led to (a project's own metric classes, `update` and `reset` in a class named
`...Metric(s)` or inheriting one; loss names in the plural; `float()` of a name bound to a device reduction): 37/53
(69.8 %) and 53/75, no longer independent.
bench/tl003_recall_judged_seed157.jsonl was judged on 2026-12-07 the same way, by a helper that never ran torchlint nor
read its rules or the other samples (seed 157, 12 hits per package where there were as many: lightning-flash 0.8.2,
mmsegmentation 1.2.2, pykale 0.2.1, rfdetr 1.11.2, rsl-rl-lib 5.5.1, sbi 0.27.0, scgpt 0.2.4, super-gradients 3.7.1,
torchdrug 0.2.1, unsloth 2026.10.9, none used before; autogluon.multimodal 1.6.3 and u8darts 0.41.0 had no candidate;
torchdrug's wheel downloads with `--python-version 3.9 --only-binary :all:`; 48 `sync`), and scored at 084ef1a and
again after the seed-151 changes, before any change made from it: TL003 or TL005 38/48 (79.2 %) by default both times,
50/56 (89.3 %) with `ALL_OPTIONS`. After the changes its misses led to (a read after a backward pass or an optimizer
step waits for them, so it is no free second read; a number formatted into a stats dict for a progress bar): 39/48
and 51/56, no longer independent. The default misses left: reads under a setting that turns a training feature on
(rsl-rl's RND and symmetry losses, unsloth's vLLM importance-sampling metrics, an lr broadcast for multi-GPU: 5), a
host value for early stopping (sbi), a count read into a host error rate (scgpt), a check whose block only logs
(rfdetr), torchdrug's `Meter.update` (no `reset`, so no metric by the protocol).
bench/tl003_recall_judged_seed163.jsonl was judged on 2026-12-07 the same way (seed 163, 12 hits per package where
there were as many: deepmd-kit 3.2.0, lightautoml 0.4.2, mattersim 1.2.3, mmrotate 0.3.4, modelscope 1.40.2,
pai-easycv 0.11.7, pykan 0.2.8, salesforce-lavis 1.0.2, schnetpack 2.1.1, stylegan2_pytorch 1.9.0, none used before;
mace-torch, nanotron and effdet had no candidate; 46 `sync`), and scored at 084ef1a and at 1d7f77b (after the
seed-151 and seed-157 changes) before any change made from it: TL003 or TL005 29/46 (63.0 %) by default both times,
48/63 (76.2 %) with `ALL_OPTIONS`. After the changes its misses led to (a parameter rebound under its own None-check
is no rare branch; the classes of an OpenMMLab codebase's `models` package are modules; a module's `forward_train`
is hot; a name rebound to the synced number, `loss = loss.cpu().numpy()`, judged by this value's reads): 37/46
(80.4 %) and 51/63, no longer independent. The default misses left: reads under a setting (deepmd's `has_f`, 2), a
None-check of a value the step made (modelscope's log buffers, 2), host values (an `np.isnan` of a loss, a label
count used as an int), progress-bar reads under `% log == 0` whose default interval is 1 (pykan, 2), a loss function
mmrotate calls through a decorator.
bench/tl003_recall_judged_seed167.jsonl was judged on 2026-12-07 the same way (seed 167, 12 hits per package where
there were as many: captum 0.9.0, imagen_pytorch 2.1.0, kornia 0.9.2, neuraloperator 2.0.0, pytorch_ood 0.4.0, sheeprl
0.8.4, sockeye 3.1.34, synthcity 0.2.12, torch_geometric 2.8.1, verl 0.9.1, none used before; pytorch_pfn_extras 0.9.0
had no candidate; 22 `sync`), and scored at 89bb9e0 before any change made from it: TL003 or TL005 16/22 (72.7 %) by
default, 31/41 (75.6 %) with `ALL_OPTIONS`. After the change its misses led to (`int()` of a count summed into a
running total is no size): 18/22, no longer independent. The default misses left: a `.item()` right after a NaN test
of the same tensor whose block raises (synthcity's GAN steps, 3: the test has waited already, and checks are
`check-error-paths`), and a loss read to stop an optimisation loop (kornia's registration, a loop exit).
bench/tl003_recall_judged_seed173.jsonl was judged on 2026-12-07 the same way (seed 173, 12 hits per package where
there were as many: byol_pytorch 0.9.1, cellpose 4.2.1.1, classy_vision 0.7.0, deepod 0.4.1, demucs 4.1.0,
e2_tts_pytorch 2.2.2, FastNLP 1.0.1, habitat_baselines 0.3.320260507, KD_Lib 0.0.32, pygod 1.1.0, robomimic 0.3.0,
torch_ac 1.4.0, none used before; FastNLP and demucs had candidates but no per-step sync; 39 `sync`), and scored at
7fed8e1 before any change made from it: TL003 or TL005 26/39 (66.7 %) by default, 43/55 (78.2 %) with
`ALL_OPTIONS`. One `sync` is judged on the wrong line (habitat's `eqa_cnn_pretrain_trainer.py:154`, a `loss.item()`
under `t % log_interval == 0`; its reason names the sum two lines above, which TL003 reports); it is left as
judged. After the changes its misses led to (a running total kept in an array's item through a name, a method
named `print`, a list of numbers given to a recorder, either arm of a conditional stored in a stats dict, a
logging function named `logger`): 33/39 (84.6 %) and 43/55, no longer independent. The default misses left: a
NumPy copy for `np.argmax` (KD_Lib), lengths a model needs on the host (`.cpu().numpy()` for packing), a count
read under an `isinstance` test, a returned dict of `float()` means once per update (habitat's PPO), a loss read
into a best-loss comparison (pygod's GADNR), and the wrongly placed line above.
bench/tl003_recall_judged_seed179.jsonl was judged on 2026-12-07 the same way (seed 179, 12 hits per package where
there were as many: adversarial-robustness-toolbox 1.20.1, deepfilternet 0.5.6, deeprobust 0.2.11, genrl 0.0.2,
hyperimpute 0.1.17, LibRecommender 1.5.2 (`librecommender-1.5.2`), meshgpt-pytorch 1.8.1, neuromancer 1.5.6, rl4co
0.7.0, semilearn 0.3.2, trankit 1.1.2, vocos 0.1.0, none used before; autonomous-learning-library and
torch-spatiotemporal had no candidate; 30 `sync`, 11 of them semilearn's), and scored at aff3636 before any change
made from it: TL003 or TL005 10/30 (33.3 %) by default, 36/52 (69.2 %) with `ALL_OPTIONS`. After the changes its
misses led to (a step's number returned to callers on an instance of its class the file builds, `self.trainer =
Trainer(...)` then `loss = self.trainer.update(batch)`; a returned tuple its caller unpacks and sums; a format
string kept in a variable, `logger.info(fmt.format(step, loss))`; a routine of the file that only prints or logs
what it is given, trankit's `self._printlog(...)`; a loop that trains through a hook it calls by name,
semilearn's `self.call_hook("after_train_step")`, mmcv's dispatch): 16/30 (53.3 %) and 47/52, no longer
independent. The default misses left: semilearn's 11, whose steps hand their numbers to
`self.process_log_dict(...)`, a routine that returns the dict it fills (reported with `check-host-values`);
meshgpt's second read of a loss just printed (2, by design: the first read has waited already), and a NumPy
copy the host needs (ART's certified training).
bench/tl003_recall_judged_seed181.jsonl was judged on 2026-12-07 the same way (seed 181, 12 hits per package where
there were as many: basicsr 1.4.2, dive_into_graphs 1.1.0, fedml 0.9.6, lightweight_gan 1.2.1, mambular 1.5.1,
parallel_wavegan 0.6.1 (`pip download --no-deps --no-build-isolation`), parlai 1.7.2, pina_mathlab 0.3.2.post2610,
recpack 0.3.6, salesforce_merlion 2.0.4, torchkeras 4.0.5, xuance 1.4.4, none used before; 61 `sync`), and scored
with the seed-179 changes before any change made from it (the same at aff3636, before them): TL003 or TL005 47/61
(77.0 %) by default, 53/64 (82.8 %) with `ALL_OPTIONS`. The default misses: a second read of a loss just logged
(fedml's `batch_loss.append(loss.item())` after the `logging.info` of `loss.item()`: 2, by design), parlai's
per-example `loss.tolist()` for metrics in its agents' `compute_loss` and a `Counter` fed from targets (5), reads
under settings (xuance's distributed arm, parallel_wavegan's VQ losses: 4), a gradient penalty's NaN test and read
on every fourth step (lightweight_gan: 2), and basicsr's `reduce_loss_dict` (1).
bench/tl003_recall_judged_seed191.jsonl was judged on 2026-12-07 the same way (seed 191, 12 hits per package where
there were as many: omnisafe 0.5.0, scArches 0.6.1, openfl 1.9, pyhealth 1.1.6, torchcp 1.2.1, open_metric_learning
4.0.0, textattack 0.3.11, voicebox_pytorch 0.5.0, daisyRec 2.3.0, dglke 0.1.2, farm 0.8.0, detecto 1.2.2, none used
before; 42 `sync`), and scored at b7dbe52 before any change made from it: TL003 or TL005 29/42 (69.0 %) by default,
52/61 (85.2 %) with `ALL_OPTIONS`. After the change its misses led to (a logger's `store`, OmniSafe's
`self._logger.store({...: loss.item()})` and Spinning Up's `logger.store(LossPi=...)`; a replay buffer's `store`
keeps data): 36/42 (85.7 %) and 52/61, no longer independent. The default misses left: `self.log(..., prog_bar=True)`
in Lightning steps (2, by design), a second read of a loss (scGen, by design), a number fed to a host Lagrange
update, a running total kept on attributes the method also rounds and divides (textattack), a registered step
buffer read as the step count (voicebox).
bench/tl003_recall_judged_seed193.jsonl was judged on 2026-12-08 the same way (seed 193, 12 hits per package where
there were as many: ai2-olmo 0.6.0, alibi-detect 0.13.0, facenet-pytorch 2.6.0, fuxictr 2.3.10, jiant 2.2.0, nequip
0.19.1, neurodiffeq 0.7.0, pycox 0.3.0, pytorchts 0.6.0, pytorchyolo 1.8.0, tez 0.7.2, tmrl 0.7.1, none used before;
15 `sync`), and scored at 02faddd before any change made from it: TL003 or TL005 10/15 (66.7 %) by default, 33/35
(94.3 %) with `ALL_OPTIONS`. After the change its misses led to (the body of `if not cfg.DEBUG_MODE:` is the usual
path): 11/15 and 33/35, no longer independent. The default misses left: two reads of losses a NaN check read first
(olmo, by design), a number kept through a `nonlocal` name by an optimizer's closure (neurodiffeq), `.item()` of a
helper's `.cpu()` copy (pytorchyolo's `to_cpu(loss).item()`; the copy is TL005's `check-cpu-copies`). After the
`nonlocal` name counted as kept (neurodiffeq): 12/15.
bench/tl003_recall_judged_seed197.jsonl was judged on 2026-12-08 the same way (seed 197, 12 hits per package where
there were as many: alignn 2026.8.11, ms_swift 4.6.0, nnunet 1.7.1, torchgfn 2.4.1, flood_forecast 1.0.dev0,
icevision 0.12.0, muse_maskgit_pytorch 0.3.5, torchsurv 0.2.0, trainer 0.0.36 (Coqui's), matcha-tts 0.0.7.2, emote_rl
23.0.0, rectools 0.19.0, none used before; 29 `sync`), and scored before any change made from it (with the
seed-193 changes): TL003 or TL005 22/29 (75.9 %) by default, 42/47 (89.4 %) with `ALL_OPTIONS`. After the change its
misses led to (a step's returned number that its caller stores for a record, `iter_losses[i] = loss`; TL005's
`print()` of an evident tensor): 24/29 and 43/47, no longer independent. The default misses left: two `print`s of
values that are no evident tensors in a loss's `forward`, nnunet's step returning `l.detach().cpu().numpy()` to
callers that rebind `l` in four branches (one of them, an LR finder, reads it on the host), a second read after a
NaN check.

Cost: one parse and one walk of each file (the scopes' walks do not overlap: a nested
loop inside a scope already walked is not walked again).
"""

from __future__ import annotations

import ast
import json
import random
import subprocess
import sys
from collections import Counter, defaultdict
from pathlib import Path
from typing import Dict, Iterator, List, Set, Tuple

STEP_NAMES = ("training_step", "train_step", "compute_loss", "train_one_epoch", "train_epoch", "_train_step",
              "_training_step", "optimize", "update", "learn", "fit_batch", "train_batch", "step_train")
LOSS_CLASS_SUFFIXES = ("Loss", "Criterion", "Objective")
OPTIMIZER_HINTS = ("optim", "opt", "optimizer", "scaler")
BRANCH_CALLS = {"any", "all", "isnan", "isinf", "isfinite", "equal", "allclose"}
NUMBER_CASTS = {"float", "int", "bool"}
# `int(x)` of these is a Python number already
HOST_ATTRIBUTES = {"shape", "ndim", "size", "__len__"}


def _calls_backward_or_step(loop: ast.AST) -> bool:
    for node in ast.walk(loop):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            if node.func.attr == "backward":
                return True
            if node.func.attr == "step" and _names_optimizer(node.func.value):
                return True
    return False


def _names_optimizer(node: ast.AST) -> bool:
    text = ast.unparse(node).lower()
    return any(hint in text for hint in OPTIMIZER_HINTS)


def training_scopes(tree: ast.Module) -> Iterator[Tuple[str, ast.AST]]:
    """(a name for the scope, the node whose body is scanned)."""
    for klass in [n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)]:
        if klass.name.endswith(LOSS_CLASS_SUFFIXES):
            for item in klass.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and item.name in ("forward", "__call__"):
                    yield f"{klass.name}.{item.name}", item
    for function in [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]:
        name = function.name
        if name in STEP_NAMES or ("loss" in name.lower() and not name.startswith("__")):
            yield name, function
            continue
        if _calls_backward_or_step(ast.Module(body=[n for n in function.body], type_ignores=[])) and not any(
            isinstance(n, (ast.For, ast.While)) and _calls_backward_or_step(n) for n in ast.walk(function)
        ):
            yield f"{name}:steps", function  # a step function: backward or an optimizer step, no loop around it
            continue
        for node in ast.walk(function):
            if isinstance(node, (ast.For, ast.While)) and _calls_backward_or_step(node):
                yield f"{name}:loop@{node.lineno}", node
                break  # the outermost such loop of the function holds the inner ones
    for node in tree.body:  # a script's top-level training loop
        if isinstance(node, (ast.For, ast.While)) and _calls_backward_or_step(node):
            yield f"<module>:loop@{node.lineno}", node


def _own_nodes(scope: ast.AST) -> Iterator[ast.AST]:
    stack = list(ast.iter_child_nodes(scope))
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        yield node
        stack.extend(ast.iter_child_nodes(node))


def _family(node: ast.AST) -> str:
    if isinstance(node, ast.Call):
        func = node.func
        if isinstance(func, ast.Attribute):
            if func.attr in ("item", "tolist", "numpy", "cpu") and not node.args and not node.keywords:
                if func.attr == "item" and isinstance(func.value, ast.Name) and func.value.id in ("dict", "self"):
                    return ""
                return func.attr
            if func.attr == "synchronize" and "cuda" in ast.unparse(func.value):
                return "sync"
        if isinstance(func, ast.Name) and func.id in NUMBER_CASTS and len(node.args) == 1:
            arg = node.args[0]
            if isinstance(arg, ast.Call) and isinstance(arg.func, ast.Name) and arg.func.id in ("len", "round", "sum"):
                return ""
            if isinstance(arg, ast.Call) and isinstance(arg.func, ast.Attribute) and arg.func.attr in ("item", "size"):
                return ""  # the `.item()` inside is the candidate
            if isinstance(arg, ast.Attribute) and arg.attr in HOST_ATTRIBUTES:
                return ""
            if isinstance(arg, ast.Subscript) and isinstance(arg.value, ast.Attribute) and arg.value.attr == "shape":
                return ""
            if isinstance(arg, (ast.Call, ast.Attribute, ast.Subscript, ast.BinOp)):
                return "number"
        if isinstance(func, ast.Name) and func.id == "print":
            if any(not (isinstance(a, ast.Constant) and isinstance(a.value, str)) for a in node.args):
                return "print"
    if isinstance(node, (ast.If, ast.While, ast.Assert)):
        test = node.test
        for inner in ast.walk(test):
            if isinstance(inner, ast.Call):
                name = inner.func.attr if isinstance(inner.func, ast.Attribute) else getattr(inner.func, "id", "")
                if name in BRANCH_CALLS:
                    return "branch"
    return ""


def scan_file(path: Path, root: Path) -> List[dict]:
    try:
        tree = ast.parse(path.read_text(encoding="utf-8", errors="replace"))
    except SyntaxError:
        return []
    seen: Set[int] = set()
    found = []
    for scope_name, scope in training_scopes(tree):
        for node in _own_nodes(scope):
            if id(node) in seen:
                continue
            seen.add(id(node))
            family = _family(node)
            if family:
                found.append({
                    "file": str(path.relative_to(root)), "line": node.lineno, "col": node.col_offset + 1,
                    "family": family, "scope": scope_name,
                    "code": ast.unparse(node.test if isinstance(node, (ast.If, ast.While, ast.Assert)) else node)[:120],
                })
    return found


def _is_test(path: Path) -> bool:
    parts = path.parts
    return "tests" in parts or "test" in parts or path.name.startswith("test_") or path.name == "conftest.py"


def scan(root: Path) -> List[dict]:
    hits = []
    for path in sorted(root.rglob("*.py")):
        if not _is_test(path.relative_to(root)) and ".git" not in path.parts:
            for hit in scan_file(path, root):
                hit["root"] = root.name
                hits.append(hit)
    return hits


def _findings(root: Path, options: Tuple[str, ...]) -> Dict[Tuple[str, int], Set[str]]:
    args = ["torchlint", "check", "--select", "TL003,TL005", "--isolated", "--no-cache", "--exit-zero",
            "--output-format", "json"]
    for option in options:
        args += ["--config", option]
    result = subprocess.run([*args, "."], cwd=root, capture_output=True, text=True, check=True)
    found: Dict[Tuple[str, int], Set[str]] = defaultdict(set)
    for finding in json.loads(result.stdout):
        name = str(Path(finding["filename"]).resolve().relative_to(root.resolve()))
        for row in range(finding["location"]["row"], finding["end_location"]["row"] + 1):
            found[(name, row)].add(finding["code"])
    return found


ALL_OPTIONS = (
    "host-sync-in-hot-path.check-host-values = true",
    "host-sync-in-hot-path.check-periodic-branches = true",
    "host-sync-in-hot-path.check-error-paths = true",
    "implicit-host-sync-in-hot-path.check-sizes = true",
    "implicit-host-sync-in-hot-path.check-cpu-copies = true",
    "implicit-host-sync-in-hot-path.check-error-paths = true",
    "implicit-host-sync-in-hot-path.check-periodic-branches = true",
    "implicit-host-sync-in-hot-path.check-loop-exits = true",
)
# verdicts: `sync` a sync on every training step; `periodic` one under a logging interval,
# a setting or a run-once test, `errorcheck` the test of a raise or assert (both real, left
# by TL003's defaults to its options); `no`, `dup` (a line judged already), `unsure`
IN_SCOPE = {"default": ("sync",), "all options": ("sync", "periodic", "errorcheck")}


def recall(judged_file: Path, roots: List[Path]) -> None:
    judged = [json.loads(line) for line in judged_file.read_text().splitlines() if line.strip()]
    by_root = {root.name: root for root in roots}
    runs = {}
    for name in sorted({hit["root"] for hit in judged if hit["verdict"] in IN_SCOPE["all options"]}):
        runs[name] = (_findings(by_root[name], ()), _findings(by_root[name], ALL_OPTIONS))
    for index, (label, verdicts) in enumerate(IN_SCOPE.items()):
        true = [hit for hit in judged if hit["verdict"] in verdicts]
        tl003 = [hit for hit in true if "TL003" in runs[hit["root"]][index].get((hit["file"], hit["line"]), ())]
        either = [hit for hit in true if runs[hit["root"]][index].get((hit["file"], hit["line"]))]
        print(f"{label} ({'/'.join(verdicts)}): TL003 {len(tl003)}/{len(true)}, TL003 or TL005 {len(either)}/{len(true)}")
        misses = Counter((hit["verdict"], hit["why"]) for hit in true if hit not in either)
        for hit in true:
            if hit not in either:
                print(f"  missed: {hit['root']} {hit['file']}:{hit['line']} [{hit['family']}] {hit.get('code', '')[:70]}")
        for (verdict, why), count in misses.most_common():
            print(f"  {count} x {verdict}: {why}")


def main(argv: List[str]) -> None:
    command, *rest = argv
    if command == "scan":
        for root in rest:
            for hit in scan(Path(root)):
                print(json.dumps(hit))
    elif command == "sample":
        source, size, seed = Path(rest[0]), int(rest[1]), int(rest[2])
        by_root: Dict[str, List[dict]] = defaultdict(list)
        for line in source.read_text().splitlines():
            hit = json.loads(line)
            by_root[hit["root"]].append(hit)
        chooser = random.Random(seed)
        for root in sorted(by_root):  # up to `size` per package, so that one large package does not decide
            for hit in chooser.sample(by_root[root], min(size, len(by_root[root]))):
                print(json.dumps(hit))
    elif command == "recall":
        recall(Path(rest[0]), [Path(root) for root in rest[1:]])
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
