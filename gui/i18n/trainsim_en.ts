<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="en_US">
<context>
    <name>EstimateTimelineText</name>
    <message>
        <source>No timeline: the scenario does not load</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>stage %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>stage %1 comm</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 micro-batch %2, chunk %3 on stage %4
%5 → %6 (%7)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>p2p send of %1 micro-batch %2 (%3)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>DP sync</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>exposed data-parallel gradient sync (%1)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>offload</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>exposed offload traffic (%1)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>optimizer</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>optimizer step (%1)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 schedule, PP %2, vpp %3, %4 micro-batches: pipeline %5, played bubble %6 (estimate %7)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>No timeline: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>No timeline: the estimate played no pipeline</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>From the estimate: each stage&apos;s forward and backward passes as its op graph reduces them (compute, and the in-layer communication the compute waited for)%1; p2p at its contention-free time. Hatched = idle (bubble). DP ranks run the same timeline.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>, the backward split into B (input grad) and W (weight grad)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The estimate&apos;s pipeline (the simulation sent no timeline): %1 schedule, PP %2, vpp %3, %4 micro-batches, played bubble %5; simulated bubble %6</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>QObject</name>
    <message>
        <source>cannot write %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>SVG export is not in this build (Qt SVG missing); save as .png</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>trainsim::gui::BreakdownView</name>
    <message>
        <source>Compute</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>TP communication</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>PP communication</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>DP communication</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>EP communication</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>CP communication</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Pipeline bubble</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Optimizer</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Offload</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Part</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Time</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Share</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Step time breakdown: no result (the scenario does not load)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>milliseconds per step</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Where the step time goes (%1 per step, %2)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Step time</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Critical pipeline stage, exposed time only: communication hidden behind compute is not counted (%1 overlapped). MFU %2, HFU %3; over all stages, the mean bubble is %4 of the step.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>seconds per step</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Step time breakdown: %1</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>trainsim::gui::CliProcess</name>
    <message>
        <source>The trainsim command-line tool was not found (set TRAINSIM_CLI to its path).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Cannot create a temporary folder for the child process.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Cannot start %1: %2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The child process crashed.</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>trainsim::gui::CompareView</name>
    <message>
        <source>pinned plan</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Pin current as A</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Load A from file…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Quantity</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>A: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>B: current</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Change B vs A</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>A = %1 (%2), B = the plan being edited.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Pin a plan as A (or load one from a file), then edit the plan: B follows your edits.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Scenario</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Model</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Cluster</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Schedule</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Micro / global batch</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>ZeRO, recompute, precision</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Feasible</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>yes</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>no: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Step time</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Throughput</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>tokens/s</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Bubble (stage mean)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Exposed comm</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Peak memory per GPU</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>differs</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>A</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>B</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Step time: A vs B</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>seconds per step</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>milliseconds per step</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>trainsim::gui::GanttWidget</name>
    <message>
        <source>No timeline</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>F forward</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>B backward (input grad)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>B backward (input + weight grad)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>W weight grad</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>p2p send</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>DP gradient sync</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>optimizer</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>offload</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>idle (bubble)</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>trainsim::gui::GoodputView</name>
    <message>
        <source>never</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 h</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 min</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>No result: the scenario does not load.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The plan is infeasible: no goodput.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Goodput needs training.faults in the scenario (component MTBFs, stragglers, checkpoint policy; see docs/faults.md).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Goodput %1 = %2 of %3 over a %4 h run; job MTBF %5, %6 failures expected. Checkpoint %7 blocks %8 every %9 (optimum %10; Young %11, Daly %12).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>tokens/s</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Straggler on stage %1: step %2 → %3.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Rebalanced: %1.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Checkpoint writes</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Lost work</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Restarts</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Waiting for repair</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Stragglers</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Degraded links</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>hours lost</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>hours lost over the run</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Time lost per cause</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>closed form (Daly)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Young</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Daly</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Monte Carlo optimum</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>policy</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>checkpoint interval (minutes)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>useful time (%)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Useful time against the checkpoint interval</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>From the simulated step (the goodput of trainsim run --fidelity simulate).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>From the estimated step (as trainsim run --fidelity estimate reports it).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Monte Carlo of %1 runs (seed %2): useful time %3 (p10 %4, p90 %5); closed form (Daly) %6. Time lost: %7 h in all.</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>trainsim::gui::MainWindow</name>
    <message>
        <source>Simulation cancelled.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Load plan A</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Scenario JSON (*.json)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Cannot load plan A</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Open scenario</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Scenario JSON (*.json);;All files (*)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Save failed</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Save scenario</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Load sweep results</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Sweep results (*.jsonl *.json *.csv);;All files (*)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Cannot load sweep</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Load Chrome/Perfetto trace</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Trace JSON (*.json);;All files (*)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Cannot load trace</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>About trainsim</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>trainsim-gui: explore parallelism plans for large-model training.
Live numbers come from the estimate tier (closed form, in-process); Simulate runs the trainsim command-line tool as a child process.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Timeline</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Memory</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Breakdown</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Topology</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Sweep</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Compare</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;File</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Open scenario…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Save scenario</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Save scenario &amp;as…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Load s&amp;weep results…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Load &amp;trace (Chrome/Perfetto)…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Export current view (PNG/SVG)…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Export current view (PNG)…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Export &amp;Perfetto trace…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Quit</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Run</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Simulate (child process)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Cancel simulation</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Language</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Help</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;About</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Unsaved changes</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Save the changes to the scenario?</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>untitled</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Cannot read %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>as opened</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Opened %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Saved %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Loaded plan from sweep: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Simulated, but its trace could not be read: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Simulation failed: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Simulation failed</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Scenario JSON</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The scenario as the command-line tool reads it; presets by name, any field may be added.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Not a JSON object.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>PNG image (*.png);;SVG drawing (*.svg)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>PNG image (*.png)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Export view</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Export failed</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Exported %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Export Perfetto trace</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>There is no timeline to export (the scenario does not load).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>the simulated timeline</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>the estimate&apos;s timeline (no simulation has run)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Export Perfetto trace: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Chrome trace JSON (*.json)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Exported %1 (open it in ui.perfetto.dev or chrome://tracing)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Goodput</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Error: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>trainsim-gui error</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>drawing the result failed: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>S&amp;weep this scenario (child process)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Search &amp;plans (child process)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Simulation finished for the scenario as it was before your edits; not shown (Simulate again for the edited one).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Showing the result in %1 (%2).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Simulated timeline: step %1 (simulate tier, child process, %2)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Simulated timeline: step %1 (simulate tier, a saved result)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Simulation finished (%1, %2).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Open validation report</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Validation report (report.json index.html);;All files (*)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Cannot load validation report</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Validation</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Open &amp;validation report…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Validation report loaded; its trace did not: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Validation report loaded: %1</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>trainsim::gui::MemoryView</name>
    <message>
        <source>Memory per GPU: no result (the scenario does not load)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Parameters</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Gradients</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Optimizer state</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Activations</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Buffers and other</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>HBM capacity (%1)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Pipeline stage</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>GiB per GPU</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Memory per GPU by pipeline stage: peak %1 of %2 HBM%3</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source> (does not fit)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Memory per GPU: %1</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>trainsim::gui::ScenarioPanel</name>
    <message>
        <source>Model</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Preset</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Layers</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Hidden size</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Attention heads</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Sequence length</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Cluster</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>GPU</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Nodes</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>GPUs per node</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Parallelism</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>TP</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>PP</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>DP</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>CP</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>EP</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>vpp</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Schedule</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Sequence parallel (SP)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Batch</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Micro-batch</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Global batch</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Memory and precision</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>ZeRO stage</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>ZeRO shard group</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>ZeRO++ secondary partition</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>int8 weights (qwZ)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>int4 gradients (qgZ)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>ZeRO++ quantization</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Recompute</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>MoE dispatch</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Keep linear inputs in fp8</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Recomputed parts</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Precision</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>optimizer</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>params</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>activations</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Offload</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Gradient compression stages</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Add stage</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Remove stage</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Edit scenario JSON…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>From step</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Method</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Top-k ratio</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Rank</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>auto: derived from the GPU count / (TP·PP·CP)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>all DP ranks</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>ZeRO 1-3: shard over this many data-parallel ranks and replicate across the rest (FSDP HYBRID_SHARD; 8 = one node)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>off</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>ZeRO-3 only: keep a second copy of each layer sharded over this many data-parallel ranks and gather the backward&apos;s parameters from it (ZeRO++ hpZ; 8 = one node)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Virtual pipeline stages (model chunks per GPU); &gt; 1 needs the interleaved schedule</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Each row starts a compression stage at a training step (plan.compression)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Invalid scenario: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Infeasible plan: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>inline: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 GPUs, %2, %3 NICs per node</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Hold DP when other degrees change</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Off: changing TP, PP, CP or the GPU count sets DP to auto (GPUs / (TP·PP·CP)). On: DP stays as given.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Fused cross-entropy kernel</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>trainsim::gui::SearchRunner</name>
    <message>
        <source>Cannot create a temporary folder for the sweep.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Sweeping…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Cannot write a temporary sweep file.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The scenario does not load: there is no model and cluster to search plans for.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Cannot write the model and cluster for the plan search.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Searching plans…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>trainsim exited with code %1:
%2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>(no message)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Cannot keep the plan search&apos;s result in %1.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Done</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The sweep wrote no rows (%1).</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>trainsim::gui::SimulateRunner</name>
    <message>
        <source>Cannot write a temporary scenario file.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Simulating…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>trainsim exited with code %1:
%2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>(no message)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>trainsim printed no result JSON.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Done</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>trainsim::gui::SummaryBar</name>
    <message>
        <source>Step time</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Throughput</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>MFU</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>HFU</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Bubble (stage mean)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Exposed comm</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Peak memory / HBM</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>GPUs</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Bad input: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>tokens/s</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Warning: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Infeasible: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Estimate (closed form, in-process), computed in %1.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Simulated (%1 tier, trainsim child process) in %2.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Simulated (%1 tier, a saved trainsim run result).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Feasible. %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Infeasible: %1 (figures show what the plan would need). %2</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>trainsim::gui::SweepView</name>
    <message>
        <source>Load sweep results</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Sweep results (*.jsonl *.json *.csv);;All files (*)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Cannot load %1: %2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Loaded plan %1 from the sweep</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>No sweep loaded</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>tokens/s</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>million tokens/s</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>thousand tokens/s</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>feasible plans</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>infeasible plans</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Pareto front</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>HBM capacity</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>peak memory per GPU (GiB)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Throughput against memory: %1 plans, %2 on the Pareto front</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1
%2, %3 per GPU, step %4%5</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source> (infeasible)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Run a sweep file</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Sweep JSON (*.json)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>plan search</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>sweep</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The %1 finished, but its results could not be read: %2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>plan search (trainsim plan)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>sweep (trainsim sweep)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The %1 finished: %2 plans, %3 on the Pareto front.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Failed: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Cancelled.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Sweep this scenario</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>trainsim sweep over TP × PP × DP, micro-batch 1-8, ZeRO 0/1/3 and recompute, with the scenario being edited as the base</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Run sweep file…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Search plans</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>trainsim plan: every plan of this model on this cluster, GPU count and global batch</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Load results…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Sweeping the plans around %1…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Running the sweep %1…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Searching the plans of %1 on %2 GPUs…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Run a sweep of this scenario, a sweep file or a plan search (each in a trainsim child process), or load results (trainsim sweep rows, trainsim plan --json, or CSV); click a point to load its plan.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>outside the constraints</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>No feasible plan among %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1: %2 plans: %3 feasible (%4 within the constraints, %5 on the Pareto front), %6 infeasible</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>; %1 infeasible plans lie outside the axes, which span the feasible ones</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>; %1 lines skipped</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Click a point to load that plan.</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>trainsim::gui::TimelineView</name>
    <message>
        <source>Load Chrome/Perfetto trace</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Trace JSON (*.json);;All files (*)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Cannot load %1: %2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Zoom in</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Zoom out</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Fit</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Load trace…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Show estimate</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Mouse wheel zooms around the cursor; drag or Shift+wheel pans</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 events on %2 lanes</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Trace: %1</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>trainsim::gui::TopologyView</name>
    <message>
        <source>No topology: the scenario does not load</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1: %2 nodes × %3 %4 = %5 GPUs, %6 network, %7 × %8 NICs per node</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>node %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>+%1 GPUs</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>NVSwitch / NVLink</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>… %1 more nodes</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>switch</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>rail %1 leaf</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>leaf %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>spine %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 network (routers not drawn)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>NVLink per GPU: %1 — %2 per step (%3)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>no intra-node groups</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>NIC: %1 — %2 per GPU per step (%3)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>no inter-node groups</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Leaf–spine uplinks: %1 (NIC load × oversubscription %2)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>No placement: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>One GPU: no parallel groups.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Groups of GPU 0 (outlined in black), placed as the estimate and the simulation place them (%1):</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>across %1 nodes, over the NICs</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>inside one node, over NVLink</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>PP: %1 stages on GPUs %2 — %3; %4 per GPU per step</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1: %2 GPUs (%3) — %4; %5 per GPU per step</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Link utilisation simulated over the step (the simulation&apos;s hottest links; dotted grey: not among them).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Hottest: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>none reported</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Estimate for comparison: NVLink %1, NIC %2 per GPU per step.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Link utilisation estimated from the bytes each group moves per GPU per step over the step time (Simulate for per-link values).</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>trainsim::gui::ValidationView</name>
    <message>
        <source>n/a</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 is not a trainsim validation report: %2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>metric</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>predicted</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>measured median</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>95% interval</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>error</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>error 95% interval</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>share of step</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>limit</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>No validation report loaded. Run `trainsim validate --backend cpu --report DIR` and open DIR here (File &gt; Open validation report); its timelines go to the Timeline view.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&lt;b&gt;Verdict: %1&lt;/b&gt; (%2)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 rank(s): TP %2 x PP %3 x DP %4, ZeRO-%5, %6, compression %7</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>not judged</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>ok</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>FAIL</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>not modelled</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>compute: %1</source>
        <translation type="unfinished"></translation>
    </message>
</context>
</TS>
