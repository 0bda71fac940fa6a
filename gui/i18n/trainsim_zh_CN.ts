<?xml version='1.0' encoding='utf-8'?>
<TS version="2.1" language="zh_CN">
<context>
    <name>EstimateTimelineText</name>
    <message>
        <source>No timeline: the scenario does not load</source>
        <translation>无时间线：场景无法加载</translation>
    </message>
    <message>
        <source>stage %1</source>
        <translation>阶段 %1</translation>
    </message>
    <message>
        <source>stage %1 comm</source>
        <translation>阶段 %1 通信</translation>
    </message>
    <message>
        <source>%1 micro-batch %2, chunk %3 on stage %4
%5 → %6 (%7)</source>
        <translation>%1 微批次 %2，块 %3，阶段 %4
%5 → %6（%7）</translation>
    </message>
    <message>
        <source>p2p send of %1 micro-batch %2 (%3)</source>
        <translation>%1 微批次 %2 的点对点发送（%3）</translation>
    </message>
    <message>
        <source>DP sync</source>
        <translation>DP 同步</translation>
    </message>
    <message>
        <source>exposed data-parallel gradient sync (%1)</source>
        <translation>暴露的数据并行梯度同步（%1）</translation>
    </message>
    <message>
        <source>offload</source>
        <translation>卸载</translation>
    </message>
    <message>
        <source>exposed offload traffic (%1)</source>
        <translation>暴露的卸载传输（%1）</translation>
    </message>
    <message>
        <source>optimizer</source>
        <translation>优化器</translation>
    </message>
    <message>
        <source>optimizer step (%1)</source>
        <translation>优化器更新（%1）</translation>
    </message>
    <message>
        <source>%1 schedule, PP %2, vpp %3, %4 micro-batches: pipeline %5, played bubble %6 (estimate %7)</source>
        <translation>%1 调度，PP %2，vpp %3，%4 个微批次：流水线 %5，回放气泡 %6（估算 %7）</translation>
    </message>
    <message>
        <source>No timeline: %1</source>
        <translation>无时间线：%1</translation>
    </message>
    <message>
        <source>No timeline: the estimate played no pipeline</source>
        <translation>无时间线：估算未回放流水线</translation>
    </message>
    <message>
        <source>From the estimate: each stage's forward and backward passes as its op graph reduces them (compute, and the in-layer communication the compute waited for)%1; p2p at its contention-free time. Hatched = idle (bubble). DP ranks run the same timeline.</source>
        <translation>来自估算：每个阶段的前向与反向传播按其算子图归约得到（计算，以及计算所等待的层内通信）%1；点对点按无竞争时间。斜线 = 空闲（气泡）。各 DP 副本的时间线相同。</translation>
    </message>
    <message>
        <source>, the backward split into B (input grad) and W (weight grad)</source>
        <translation>，反向拆分为 B（输入梯度）和 W（权重梯度）</translation>
    </message>
    <message>
        <source>The estimate's pipeline (the simulation sent no timeline): %1 schedule, PP %2, vpp %3, %4 micro-batches, played bubble %5; simulated bubble %6</source>
        <translation>估算的流水线（仿真未返回时间线）：%1 调度，PP %2，vpp %3，%4 个微批次，回放气泡 %5；仿真气泡 %6</translation>
    </message>
</context>
<context>
    <name>QObject</name>
    <message>
        <source>cannot write %1</source>
        <translation>无法写入 %1</translation>
    </message>
    <message>
        <source>SVG export is not in this build (Qt SVG missing); save as .png</source>
        <translation>此版本不支持 SVG 导出（缺少 Qt SVG）；请保存为 .png</translation>
    </message>
</context>
<context>
    <name>trainsim::gui::BreakdownView</name>
    <message>
        <source>Compute</source>
        <translation>计算</translation>
    </message>
    <message>
        <source>TP communication</source>
        <translation>TP 通信</translation>
    </message>
    <message>
        <source>PP communication</source>
        <translation>PP 通信</translation>
    </message>
    <message>
        <source>DP communication</source>
        <translation>DP 通信</translation>
    </message>
    <message>
        <source>EP communication</source>
        <translation>EP 通信</translation>
    </message>
    <message>
        <source>CP communication</source>
        <translation>CP 通信</translation>
    </message>
    <message>
        <source>Pipeline bubble</source>
        <translation>流水线气泡</translation>
    </message>
    <message>
        <source>Optimizer</source>
        <translation>优化器</translation>
    </message>
    <message>
        <source>Offload</source>
        <translation>卸载</translation>
    </message>
    <message>
        <source>Part</source>
        <translation>组成</translation>
    </message>
    <message>
        <source>Time</source>
        <translation>时间</translation>
    </message>
    <message>
        <source>Share</source>
        <translation>占比</translation>
    </message>
    <message>
        <source>Step time breakdown: no result (the scenario does not load)</source>
        <translation>步时间分解：无结果（场景无法加载）</translation>
    </message>
    <message>
        <source>milliseconds per step</source>
        <translation>每步毫秒</translation>
    </message>
    <message>
        <source>Where the step time goes (%1 per step, %2)</source>
        <translation>步时间去向（每步 %1，%2）</translation>
    </message>
    <message>
        <source>Step time</source>
        <translation>步时间</translation>
    </message>
    <message>
        <source>Critical pipeline stage, exposed time only: communication hidden behind compute is not counted (%1 overlapped). MFU %2, HFU %3; over all stages, the mean bubble is %4 of the step.</source>
        <translation>关键流水线阶段，仅计暴露时间：被计算掩盖的通信不计入（重叠 %1）。MFU %2，HFU %3；各阶段平均气泡占步时间 %4。</translation>
    </message>
    <message>
        <source>seconds per step</source>
        <translation>每步秒数</translation>
    </message>
    <message>
        <source>Step time breakdown: %1</source>
        <translation>步时间分解：%1</translation>
    </message>
</context>
<context>
    <name>trainsim::gui::CliProcess</name>
    <message>
        <source>The trainsim command-line tool was not found (set TRAINSIM_CLI to its path).</source>
        <translation>找不到 trainsim 命令行工具（请将 TRAINSIM_CLI 设为其路径）。</translation>
    </message>
    <message>
        <source>Cannot create a temporary folder for the child process.</source>
        <translation>无法为子进程创建临时文件夹。</translation>
    </message>
    <message>
        <source>Cannot start %1: %2</source>
        <translation>无法启动 %1：%2</translation>
    </message>
    <message>
        <source>The child process crashed.</source>
        <translation>子进程崩溃。</translation>
    </message>
</context>
<context>
    <name>trainsim::gui::CompareView</name>
    <message>
        <source>pinned plan</source>
        <translation>固定的方案</translation>
    </message>
    <message>
        <source>Pin current as A</source>
        <translation>将当前方案固定为 A</translation>
    </message>
    <message>
        <source>Load A from file…</source>
        <translation>从文件加载 A…</translation>
    </message>
    <message>
        <source>Quantity</source>
        <translation>指标</translation>
    </message>
    <message>
        <source>A: %1</source>
        <translation>A：%1</translation>
    </message>
    <message>
        <source>B: current</source>
        <translation>B：当前</translation>
    </message>
    <message>
        <source>Change B vs A</source>
        <translation>B 相对 A 的变化</translation>
    </message>
    <message>
        <source>A = %1 (%2), B = the plan being edited.</source>
        <translation>A = %1（%2），B = 正在编辑的方案。</translation>
    </message>
    <message>
        <source>Pin a plan as A (or load one from a file), then edit the plan: B follows your edits.</source>
        <translation>将一个方案固定为 A（或从文件加载），然后编辑方案：B 随编辑更新。</translation>
    </message>
    <message>
        <source>Scenario</source>
        <translation>场景</translation>
    </message>
    <message>
        <source>Model</source>
        <translation>模型</translation>
    </message>
    <message>
        <source>Cluster</source>
        <translation>集群</translation>
    </message>
    <message>
        <source>Schedule</source>
        <translation>调度</translation>
    </message>
    <message>
        <source>Micro / global batch</source>
        <translation>微批次 / 全局批次</translation>
    </message>
    <message>
        <source>ZeRO, recompute, precision</source>
        <translation>ZeRO、重计算、精度</translation>
    </message>
    <message>
        <source>Feasible</source>
        <translation>可行</translation>
    </message>
    <message>
        <source>yes</source>
        <translation>是</translation>
    </message>
    <message>
        <source>no: %1</source>
        <translation>否：%1</translation>
    </message>
    <message>
        <source>Step time</source>
        <translation>步时间</translation>
    </message>
    <message>
        <source>Throughput</source>
        <translation>吞吐量</translation>
    </message>
    <message>
        <source>tokens/s</source>
        <translation>token/秒</translation>
    </message>
    <message>
        <source>Bubble (stage mean)</source>
        <translation>气泡（阶段平均）</translation>
    </message>
    <message>
        <source>Exposed comm</source>
        <translation>暴露通信</translation>
    </message>
    <message>
        <source>Peak memory per GPU</source>
        <translation>每 GPU 峰值内存</translation>
    </message>
    <message>
        <source>differs</source>
        <translation>不同</translation>
    </message>
    <message>
        <source>A</source>
        <translation>A</translation>
    </message>
    <message>
        <source>B</source>
        <translation>B</translation>
    </message>
    <message>
        <source>Step time: A vs B</source>
        <translation>步时间：A 对比 B</translation>
    </message>
    <message>
        <source>seconds per step</source>
        <translation>每步秒数</translation>
    </message>
    <message>
        <source>milliseconds per step</source>
        <translation>每步毫秒</translation>
    </message>
</context>
<context>
    <name>trainsim::gui::GanttWidget</name>
    <message>
        <source>No timeline</source>
        <translation>无时间线</translation>
    </message>
    <message>
        <source>F forward</source>
        <translation>F 前向</translation>
    </message>
    <message>
        <source>B backward (input grad)</source>
        <translation>B 反向（输入梯度）</translation>
    </message>
    <message>
        <source>B backward (input + weight grad)</source>
        <translation>B 反向（输入 + 权重梯度）</translation>
    </message>
    <message>
        <source>W weight grad</source>
        <translation>W 权重梯度</translation>
    </message>
    <message>
        <source>p2p send</source>
        <translation>点对点发送</translation>
    </message>
    <message>
        <source>DP gradient sync</source>
        <translation>DP 梯度同步</translation>
    </message>
    <message>
        <source>optimizer</source>
        <translation>优化器</translation>
    </message>
    <message>
        <source>offload</source>
        <translation>卸载</translation>
    </message>
    <message>
        <source>idle (bubble)</source>
        <translation>空闲（气泡）</translation>
    </message>
</context>
<context>
    <name>trainsim::gui::GoodputView</name>
    <message>
        <source>never</source>
        <translation>从不</translation>
    </message>
    <message>
        <source>%1 h</source>
        <translation>%1 小时</translation>
    </message>
    <message>
        <source>%1 min</source>
        <translation>%1 分钟</translation>
    </message>
    <message>
        <source>No result: the scenario does not load.</source>
        <translation>无结果：场景无法加载。</translation>
    </message>
    <message>
        <source>The plan is infeasible: no goodput.</source>
        <translation>方案不可行：无有效吞吐。</translation>
    </message>
    <message>
        <source>Goodput needs training.faults in the scenario (component MTBFs, stragglers, checkpoint policy; see docs/faults.md).</source>
        <translation>有效吞吐需要场景中的 training.faults（各部件 MTBF、慢节点、检查点策略；见 docs/faults.md）。</translation>
    </message>
    <message>
        <source>Goodput %1 = %2 of %3 over a %4 h run; job MTBF %5, %6 failures expected. Checkpoint %7 blocks %8 every %9 (optimum %10; Young %11, Daly %12).</source>
        <translation>有效吞吐 %1 = %3 的 %2（运行 %4 小时）；作业 MTBF %5，预计 %6 次故障。检查点 %7 每 %9 阻塞 %8（最优 %10；Young %11，Daly %12）。</translation>
    </message>
    <message>
        <source>tokens/s</source>
        <translation>token/秒</translation>
    </message>
    <message>
        <source>Straggler on stage %1: step %2 → %3.</source>
        <translation>阶段 %1 有慢节点：步时 %2 → %3。</translation>
    </message>
    <message>
        <source>Rebalanced: %1.</source>
        <translation>重新划分后：%1。</translation>
    </message>
    <message>
        <source>Checkpoint writes</source>
        <translation>检查点写入</translation>
    </message>
    <message>
        <source>Lost work</source>
        <translation>丢失的计算</translation>
    </message>
    <message>
        <source>Restarts</source>
        <translation>重启</translation>
    </message>
    <message>
        <source>Waiting for repair</source>
        <translation>等待维修</translation>
    </message>
    <message>
        <source>Stragglers</source>
        <translation>慢节点</translation>
    </message>
    <message>
        <source>Degraded links</source>
        <translation>降速链路</translation>
    </message>
    <message>
        <source>hours lost</source>
        <translation>损失小时数</translation>
    </message>
    <message>
        <source>hours lost over the run</source>
        <translation>整个运行损失的小时数</translation>
    </message>
    <message>
        <source>Time lost per cause</source>
        <translation>各原因损失的时间</translation>
    </message>
    <message>
        <source>closed form (Daly)</source>
        <translation>闭式解（Daly）</translation>
    </message>
    <message>
        <source>Young</source>
        <translation>Young</translation>
    </message>
    <message>
        <source>Daly</source>
        <translation>Daly</translation>
    </message>
    <message>
        <source>Monte Carlo optimum</source>
        <translation>蒙特卡洛最优</translation>
    </message>
    <message>
        <source>policy</source>
        <translation>策略</translation>
    </message>
    <message>
        <source>checkpoint interval (minutes)</source>
        <translation>检查点间隔（分钟）</translation>
    </message>
    <message>
        <source>useful time (%)</source>
        <translation>有效时间（%）</translation>
    </message>
    <message>
        <source>Useful time against the checkpoint interval</source>
        <translation>有效时间与检查点间隔的关系</translation>
    </message>
    <message>
        <source>From the simulated step (the goodput of trainsim run --fidelity simulate).</source>
        <translation>基于仿真的步（即 trainsim run --fidelity simulate 的有效吞吐）。</translation>
    </message>
    <message>
        <source>From the estimated step (as trainsim run --fidelity estimate reports it).</source>
        <translation>基于估算的步（与 trainsim run --fidelity estimate 的报告相同）。</translation>
    </message>
    <message>
        <source>Monte Carlo of %1 runs (seed %2): useful time %3 (p10 %4, p90 %5); closed form (Daly) %6. Time lost: %7 h in all.</source>
        <translation>蒙特卡洛 %1 次运行（种子 %2）：有效时间 %3（p10 %4，p90 %5）；闭式解（Daly）%6。共损失 %7 小时。</translation>
    </message>
</context>
<context>
    <name>trainsim::gui::MainWindow</name>
    <message>
        <source>Simulation cancelled.</source>
        <translation>仿真已取消。</translation>
    </message>
    <message>
        <source>Load plan A</source>
        <translation>加载方案 A</translation>
    </message>
    <message>
        <source>Scenario JSON (*.json)</source>
        <translation>场景 JSON (*.json)</translation>
    </message>
    <message>
        <source>Cannot load plan A</source>
        <translation>无法加载方案 A</translation>
    </message>
    <message>
        <source>Open scenario</source>
        <translation>打开场景</translation>
    </message>
    <message>
        <source>Scenario JSON (*.json);;All files (*)</source>
        <translation>场景 JSON (*.json);;所有文件 (*)</translation>
    </message>
    <message>
        <source>Save failed</source>
        <translation>保存失败</translation>
    </message>
    <message>
        <source>Save scenario</source>
        <translation>保存场景</translation>
    </message>
    <message>
        <source>Load sweep results</source>
        <translation>加载扫描结果</translation>
    </message>
    <message>
        <source>Sweep results (*.jsonl *.json *.csv);;All files (*)</source>
        <translation>扫描结果 (*.jsonl *.json *.csv);;所有文件 (*)</translation>
    </message>
    <message>
        <source>Cannot load sweep</source>
        <translation>无法加载扫描结果</translation>
    </message>
    <message>
        <source>Load Chrome/Perfetto trace</source>
        <translation>加载 Chrome/Perfetto 跟踪</translation>
    </message>
    <message>
        <source>Trace JSON (*.json);;All files (*)</source>
        <translation>跟踪 JSON (*.json);;所有文件 (*)</translation>
    </message>
    <message>
        <source>Cannot load trace</source>
        <translation>无法加载跟踪</translation>
    </message>
    <message>
        <source>About trainsim</source>
        <translation>关于 trainsim</translation>
    </message>
    <message>
        <source>trainsim-gui: explore parallelism plans for large-model training.
Live numbers come from the estimate tier (closed form, in-process); Simulate runs the trainsim command-line tool as a child process.</source>
        <translation>trainsim-gui：探索大模型训练的并行方案。
实时数字来自估算层（解析公式，进程内计算）；“仿真”以子进程运行 trainsim 命令行工具。</translation>
    </message>
    <message>
        <source>Timeline</source>
        <translation>时间线</translation>
    </message>
    <message>
        <source>Memory</source>
        <translation>内存</translation>
    </message>
    <message>
        <source>Breakdown</source>
        <translation>时间分解</translation>
    </message>
    <message>
        <source>Topology</source>
        <translation>拓扑</translation>
    </message>
    <message>
        <source>Sweep</source>
        <translation>扫描</translation>
    </message>
    <message>
        <source>Compare</source>
        <translation>对比</translation>
    </message>
    <message>
        <source>&amp;File</source>
        <translation>文件(&amp;F)</translation>
    </message>
    <message>
        <source>&amp;Open scenario…</source>
        <translation>打开场景(&amp;O)…</translation>
    </message>
    <message>
        <source>&amp;Save scenario</source>
        <translation>保存场景(&amp;S)</translation>
    </message>
    <message>
        <source>Save scenario &amp;as…</source>
        <translation>场景另存为(&amp;A)…</translation>
    </message>
    <message>
        <source>Load s&amp;weep results…</source>
        <translation>加载扫描结果(&amp;W)…</translation>
    </message>
    <message>
        <source>Load &amp;trace (Chrome/Perfetto)…</source>
        <translation>加载跟踪(&amp;T)（Chrome/Perfetto）…</translation>
    </message>
    <message>
        <source>&amp;Export current view (PNG/SVG)…</source>
        <translation>导出当前视图(&amp;E)（PNG/SVG）…</translation>
    </message>
    <message>
        <source>&amp;Export current view (PNG)…</source>
        <translation>导出当前视图(&amp;E)（PNG）…</translation>
    </message>
    <message>
        <source>Export &amp;Perfetto trace…</source>
        <translation>导出 Perfetto 跟踪(&amp;P)…</translation>
    </message>
    <message>
        <source>&amp;Quit</source>
        <translation>退出(&amp;Q)</translation>
    </message>
    <message>
        <source>&amp;Run</source>
        <translation>运行(&amp;R)</translation>
    </message>
    <message>
        <source>&amp;Simulate (child process)</source>
        <translation>仿真(&amp;S)（子进程）</translation>
    </message>
    <message>
        <source>&amp;Cancel simulation</source>
        <translation>取消仿真(&amp;C)</translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation>取消</translation>
    </message>
    <message>
        <source>&amp;Language</source>
        <translation>语言(&amp;L)</translation>
    </message>
    <message>
        <source>&amp;Help</source>
        <translation>帮助(&amp;H)</translation>
    </message>
    <message>
        <source>&amp;About</source>
        <translation>关于(&amp;A)</translation>
    </message>
    <message>
        <source>Unsaved changes</source>
        <translation>未保存的更改</translation>
    </message>
    <message>
        <source>Save the changes to the scenario?</source>
        <translation>是否保存对场景的更改？</translation>
    </message>
    <message>
        <source>untitled</source>
        <translation>未命名</translation>
    </message>
    <message>
        <source>Cannot read %1</source>
        <translation>无法读取 %1</translation>
    </message>
    <message>
        <source>as opened</source>
        <translation>打开时</translation>
    </message>
    <message>
        <source>Opened %1</source>
        <translation>已打开 %1</translation>
    </message>
    <message>
        <source>Saved %1</source>
        <translation>已保存 %1</translation>
    </message>
    <message>
        <source>Loaded plan from sweep: %1</source>
        <translation>已从扫描加载方案：%1</translation>
    </message>
    <message>
        <source>Simulated, but its trace could not be read: %1</source>
        <translation>仿真完成，但无法读取其跟踪：%1</translation>
    </message>
    <message>
        <source>Simulation failed: %1</source>
        <translation>仿真失败：%1</translation>
    </message>
    <message>
        <source>Simulation failed</source>
        <translation>仿真失败</translation>
    </message>
    <message>
        <source>Scenario JSON</source>
        <translation>场景 JSON</translation>
    </message>
    <message>
        <source>The scenario as the command-line tool reads it; presets by name, any field may be added.</source>
        <translation>命令行工具读取的场景；预设按名称引用，可添加任意字段。</translation>
    </message>
    <message>
        <source>Not a JSON object.</source>
        <translation>不是 JSON 对象。</translation>
    </message>
    <message>
        <source>PNG image (*.png);;SVG drawing (*.svg)</source>
        <translation>PNG 图像 (*.png);;SVG 矢量图 (*.svg)</translation>
    </message>
    <message>
        <source>PNG image (*.png)</source>
        <translation>PNG 图像 (*.png)</translation>
    </message>
    <message>
        <source>Export view</source>
        <translation>导出视图</translation>
    </message>
    <message>
        <source>Export failed</source>
        <translation>导出失败</translation>
    </message>
    <message>
        <source>Exported %1</source>
        <translation>已导出 %1</translation>
    </message>
    <message>
        <source>Export Perfetto trace</source>
        <translation>导出 Perfetto 跟踪</translation>
    </message>
    <message>
        <source>There is no timeline to export (the scenario does not load).</source>
        <translation>没有可导出的时间线（场景无法加载）。</translation>
    </message>
    <message>
        <source>the simulated timeline</source>
        <translation>仿真时间线</translation>
    </message>
    <message>
        <source>the estimate's timeline (no simulation has run)</source>
        <translation>估算的时间线（尚未运行仿真）</translation>
    </message>
    <message>
        <source>Export Perfetto trace: %1</source>
        <translation>导出 Perfetto 跟踪：%1</translation>
    </message>
    <message>
        <source>Chrome trace JSON (*.json)</source>
        <translation>Chrome 跟踪 JSON (*.json)</translation>
    </message>
    <message>
        <source>Exported %1 (open it in ui.perfetto.dev or chrome://tracing)</source>
        <translation>已导出 %1（可在 ui.perfetto.dev 或 chrome://tracing 中打开）</translation>
    </message>
    <message>
        <source>Goodput</source>
        <translation>有效吞吐</translation>
    </message>
    <message>
        <source>Error: %1</source>
        <translation>错误：%1</translation>
    </message>
    <message>
        <source>trainsim-gui error</source>
        <translation>trainsim-gui 错误</translation>
    </message>
    <message>
        <source>drawing the result failed: %1</source>
        <translation>绘制结果失败：%1</translation>
    </message>
    <message>
        <source>S&amp;weep this scenario (child process)</source>
        <translation>扫描此场景（子进程）(&amp;W)</translation>
    </message>
    <message>
        <source>Search &amp;plans (child process)</source>
        <translation>搜索方案（子进程）(&amp;P)</translation>
    </message>
    <message>
        <source>Simulation finished for the scenario as it was before your edits; not shown (Simulate again for the edited one).</source>
        <translation>仿真针对的是编辑前的场景，已完成但不显示（请对编辑后的场景重新仿真）。</translation>
    </message>
    <message>
        <source>Showing the result in %1 (%2).</source>
        <translation>显示 %1 中的结果（%2）。</translation>
    </message>
    <message>
        <source>Simulated timeline: step %1 (simulate tier, child process, %2)</source>
        <translation>仿真时间线：步时 %1（仿真层，子进程，%2）</translation>
    </message>
    <message>
        <source>Simulated timeline: step %1 (simulate tier, a saved result)</source>
        <translation>仿真时间线：步时 %1（仿真层，已保存的结果）</translation>
    </message>
    <message>
        <source>Simulation finished (%1, %2).</source>
        <translation>仿真完成（%1，%2）。</translation>
    </message>
    <message>
        <source>Open validation report</source>
        <translation>打开验证报告</translation>
    </message>
    <message>
        <source>Validation report (report.json index.html);;All files (*)</source>
        <translation>验证报告 (report.json index.html);;所有文件 (*)</translation>
    </message>
    <message>
        <source>Cannot load validation report</source>
        <translation>无法加载验证报告</translation>
    </message>
    <message>
        <source>Validation</source>
        <translation>验证</translation>
    </message>
    <message>
        <source>Open &amp;validation report…</source>
        <translation>打开验证报告(&amp;V)…</translation>
    </message>
    <message>
        <source>Validation report loaded; its trace did not: %1</source>
        <translation>验证报告已加载；其追踪未能加载：%1</translation>
    </message>
    <message>
        <source>Validation report loaded: %1</source>
        <translation>验证报告已加载：%1</translation>
    </message>
</context>
<context>
    <name>trainsim::gui::MemoryView</name>
    <message>
        <source>Memory per GPU: no result (the scenario does not load)</source>
        <translation>每 GPU 内存：无结果（场景无法加载）</translation>
    </message>
    <message>
        <source>Parameters</source>
        <translation>参数</translation>
    </message>
    <message>
        <source>Gradients</source>
        <translation>梯度</translation>
    </message>
    <message>
        <source>Optimizer state</source>
        <translation>优化器状态</translation>
    </message>
    <message>
        <source>Activations</source>
        <translation>激活</translation>
    </message>
    <message>
        <source>Buffers and other</source>
        <translation>缓冲区及其他</translation>
    </message>
    <message>
        <source>HBM capacity (%1)</source>
        <translation>HBM 容量（%1）</translation>
    </message>
    <message>
        <source>Pipeline stage</source>
        <translation>流水线阶段</translation>
    </message>
    <message>
        <source>GiB per GPU</source>
        <translation>每 GPU GiB</translation>
    </message>
    <message>
        <source>Memory per GPU by pipeline stage: peak %1 of %2 HBM%3</source>
        <translation>各流水线阶段每 GPU 内存：峰值 %1 / HBM %2%3</translation>
    </message>
    <message>
        <source> (does not fit)</source>
        <translation>（放不下）</translation>
    </message>
    <message>
        <source>Memory per GPU: %1</source>
        <translation>每 GPU 内存：%1</translation>
    </message>
</context>
<context>
    <name>trainsim::gui::ScenarioPanel</name>
    <message>
        <source>Model</source>
        <translation>模型</translation>
    </message>
    <message>
        <source>Preset</source>
        <translation>预设</translation>
    </message>
    <message>
        <source>Layers</source>
        <translation>层数</translation>
    </message>
    <message>
        <source>Hidden size</source>
        <translation>隐藏维度</translation>
    </message>
    <message>
        <source>Attention heads</source>
        <translation>注意力头数</translation>
    </message>
    <message>
        <source>Sequence length</source>
        <translation>序列长度</translation>
    </message>
    <message>
        <source>Cluster</source>
        <translation>集群</translation>
    </message>
    <message>
        <source>GPU</source>
        <translation>GPU</translation>
    </message>
    <message>
        <source>Nodes</source>
        <translation>节点数</translation>
    </message>
    <message>
        <source>GPUs per node</source>
        <translation>每节点 GPU 数</translation>
    </message>
    <message>
        <source>Parallelism</source>
        <translation>并行方式</translation>
    </message>
    <message>
        <source>TP</source>
        <translation>TP</translation>
    </message>
    <message>
        <source>PP</source>
        <translation>PP</translation>
    </message>
    <message>
        <source>DP</source>
        <translation>DP</translation>
    </message>
    <message>
        <source>CP</source>
        <translation>CP</translation>
    </message>
    <message>
        <source>EP</source>
        <translation>EP</translation>
    </message>
    <message>
        <source>vpp</source>
        <translation>vpp</translation>
    </message>
    <message>
        <source>Schedule</source>
        <translation>调度</translation>
    </message>
    <message>
        <source>Sequence parallel (SP)</source>
        <translation>序列并行（SP）</translation>
    </message>
    <message>
        <source>Batch</source>
        <translation>批次</translation>
    </message>
    <message>
        <source>Micro-batch</source>
        <translation>微批次</translation>
    </message>
    <message>
        <source>Global batch</source>
        <translation>全局批次</translation>
    </message>
    <message>
        <source>Memory and precision</source>
        <translation>内存与精度</translation>
    </message>
    <message>
        <source>ZeRO stage</source>
        <translation>ZeRO 阶段</translation>
    </message>
    <message>
        <source>ZeRO shard group</source>
        <translation>ZeRO 分片组</translation>
    </message>
    <message>
        <source>ZeRO++ secondary partition</source>
        <translation>ZeRO++ 二级分区</translation>
    </message>
    <message>
        <source>int8 weights (qwZ)</source>
        <translation>int8 权重（qwZ）</translation>
    </message>
    <message>
        <source>int4 gradients (qgZ)</source>
        <translation>int4 梯度（qgZ）</translation>
    </message>
    <message>
        <source>ZeRO++ quantization</source>
        <translation>ZeRO++ 量化</translation>
    </message>
    <message>
        <source>Recompute</source>
        <translation>重计算</translation>
    </message>
    <message>
        <source>MoE dispatch</source>
        <translation>MoE 分发</translation>
    </message>
    <message>
        <source>Keep linear inputs in fp8</source>
        <translation>以 fp8 保存线性层输入</translation>
    </message>
    <message>
        <source>Recomputed parts</source>
        <translation>重计算部分</translation>
    </message>
    <message>
        <source>Precision</source>
        <translation>精度</translation>
    </message>
    <message>
        <source>optimizer</source>
        <translation>优化器</translation>
    </message>
    <message>
        <source>params</source>
        <translation>参数</translation>
    </message>
    <message>
        <source>activations</source>
        <translation>激活</translation>
    </message>
    <message>
        <source>Offload</source>
        <translation>卸载</translation>
    </message>
    <message>
        <source>Gradient compression stages</source>
        <translation>梯度压缩阶段</translation>
    </message>
    <message>
        <source>Add stage</source>
        <translation>添加阶段</translation>
    </message>
    <message>
        <source>Remove stage</source>
        <translation>删除阶段</translation>
    </message>
    <message>
        <source>Edit scenario JSON…</source>
        <translation>编辑场景 JSON…</translation>
    </message>
    <message>
        <source>From step</source>
        <translation>起始步</translation>
    </message>
    <message>
        <source>Method</source>
        <translation>方法</translation>
    </message>
    <message>
        <source>Top-k ratio</source>
        <translation>Top-k 比例</translation>
    </message>
    <message>
        <source>Rank</source>
        <translation>秩</translation>
    </message>
    <message>
        <source>auto: derived from the GPU count / (TP·PP·CP)</source>
        <translation>auto：由 GPU 数 / (TP·PP·CP) 推出</translation>
    </message>
    <message>
        <source>all DP ranks</source>
        <translation>全部 DP 进程</translation>
    </message>
    <message>
        <source>ZeRO 1-3: shard over this many data-parallel ranks and replicate across the rest (FSDP HYBRID_SHARD; 8 = one node)</source>
        <translation>ZeRO 1-3：在这么多个数据并行进程内分片，其余之间复制（FSDP HYBRID_SHARD；8 = 一个节点）</translation>
    </message>
    <message>
        <source>off</source>
        <translation>关闭</translation>
    </message>
    <message>
        <source>ZeRO-3 only: keep a second copy of each layer sharded over this many data-parallel ranks and gather the backward's parameters from it (ZeRO++ hpZ; 8 = one node)</source>
        <translation>仅 ZeRO-3：每层参数在这么多个数据并行进程内再保留一份分片副本，反向从它收集参数（ZeRO++ hpZ；8 = 一个节点）</translation>
    </message>
    <message>
        <source>Virtual pipeline stages (model chunks per GPU); &gt; 1 needs the interleaved schedule</source>
        <translation>虚拟流水线阶段（每 GPU 的模型块数）；大于 1 需要 interleaved 调度</translation>
    </message>
    <message>
        <source>Each row starts a compression stage at a training step (plan.compression)</source>
        <translation>每行在某训练步开始一个压缩阶段（plan.compression）</translation>
    </message>
    <message>
        <source>Invalid scenario: %1</source>
        <translation>场景无效：%1</translation>
    </message>
    <message>
        <source>Infeasible plan: %1</source>
        <translation>方案不可行：%1</translation>
    </message>
    <message>
        <source>inline: %1</source>
        <translation>内联：%1</translation>
    </message>
    <message>
        <source>%1 GPUs, %2, %3 NICs per node</source>
        <translation>%1 个 GPU，%2，每节点 %3 块网卡</translation>
    </message>
    <message>
        <source>Hold DP when other degrees change</source>
        <translation>其他并行度变化时保持 DP</translation>
    </message>
    <message>
        <source>Off: changing TP, PP, CP or the GPU count sets DP to auto (GPUs / (TP·PP·CP)). On: DP stays as given.</source>
        <translation>关闭：修改 TP、PP、CP 或 GPU 数量时 DP 自动推导（GPU 数 / (TP·PP·CP)）。开启：DP 保持给定值。</translation>
    </message>
    <message>
        <source>Fused cross-entropy kernel</source>
        <translation>融合交叉熵内核</translation>
    </message>
</context>
<context>
    <name>trainsim::gui::SearchRunner</name>
    <message>
        <source>Cannot create a temporary folder for the sweep.</source>
        <translation>无法为扫描创建临时文件夹。</translation>
    </message>
    <message>
        <source>Sweeping…</source>
        <translation>扫描中…</translation>
    </message>
    <message>
        <source>Cannot write a temporary sweep file.</source>
        <translation>无法写入临时扫描文件。</translation>
    </message>
    <message>
        <source>The scenario does not load: there is no model and cluster to search plans for.</source>
        <translation>场景无法加载：没有可供搜索方案的模型和集群。</translation>
    </message>
    <message>
        <source>Cannot write the model and cluster for the plan search.</source>
        <translation>无法为方案搜索写入模型和集群。</translation>
    </message>
    <message>
        <source>Searching plans…</source>
        <translation>搜索方案中…</translation>
    </message>
    <message>
        <source>trainsim exited with code %1:
%2</source>
        <translation>trainsim 以代码 %1 退出：
%2</translation>
    </message>
    <message>
        <source>(no message)</source>
        <translation>（无消息）</translation>
    </message>
    <message>
        <source>Cannot keep the plan search's result in %1.</source>
        <translation>无法将方案搜索结果保存到 %1。</translation>
    </message>
    <message>
        <source>Done</source>
        <translation>完成</translation>
    </message>
    <message>
        <source>The sweep wrote no rows (%1).</source>
        <translation>扫描未写出任何结果行（%1）。</translation>
    </message>
</context>
<context>
    <name>trainsim::gui::SimulateRunner</name>
    <message>
        <source>Cannot write a temporary scenario file.</source>
        <translation>无法写入临时场景文件。</translation>
    </message>
    <message>
        <source>Simulating…</source>
        <translation>仿真中…</translation>
    </message>
    <message>
        <source>trainsim exited with code %1:
%2</source>
        <translation>trainsim 以代码 %1 退出：
%2</translation>
    </message>
    <message>
        <source>(no message)</source>
        <translation>（无消息）</translation>
    </message>
    <message>
        <source>trainsim printed no result JSON.</source>
        <translation>trainsim 未输出结果 JSON。</translation>
    </message>
    <message>
        <source>Done</source>
        <translation>完成</translation>
    </message>
</context>
<context>
    <name>trainsim::gui::SummaryBar</name>
    <message>
        <source>Step time</source>
        <translation>步时间</translation>
    </message>
    <message>
        <source>Throughput</source>
        <translation>吞吐量</translation>
    </message>
    <message>
        <source>MFU</source>
        <translation>MFU</translation>
    </message>
    <message>
        <source>HFU</source>
        <translation>HFU</translation>
    </message>
    <message>
        <source>Bubble (stage mean)</source>
        <translation>气泡（阶段平均）</translation>
    </message>
    <message>
        <source>Exposed comm</source>
        <translation>暴露通信</translation>
    </message>
    <message>
        <source>Peak memory / HBM</source>
        <translation>峰值内存 / HBM</translation>
    </message>
    <message>
        <source>GPUs</source>
        <translation>GPU 数</translation>
    </message>
    <message>
        <source>Bad input: %1</source>
        <translation>输入错误：%1</translation>
    </message>
    <message>
        <source>tokens/s</source>
        <translation>token/秒</translation>
    </message>
    <message>
        <source>Warning: %1</source>
        <translation>警告：%1</translation>
    </message>
    <message>
        <source>Infeasible: %1</source>
        <translation>不可行：%1</translation>
    </message>
    <message>
        <source>Estimate (closed form, in-process), computed in %1.</source>
        <translation>估算（闭式，进程内），用时 %1。</translation>
    </message>
    <message>
        <source>Simulated (%1 tier, trainsim child process) in %2.</source>
        <translation>仿真（%1 层，trainsim 子进程），用时 %2。</translation>
    </message>
    <message>
        <source>Simulated (%1 tier, a saved trainsim run result).</source>
        <translation>仿真（%1 层，已保存的 trainsim run 结果）。</translation>
    </message>
    <message>
        <source>Feasible. %1</source>
        <translation>可行。%1</translation>
    </message>
    <message>
        <source>Infeasible: %1 (figures show what the plan would need). %2</source>
        <translation>不可行：%1（图中为该方案所需的量）。%2</translation>
    </message>
</context>
<context>
    <name>trainsim::gui::SweepView</name>
    <message>
        <source>Load sweep results</source>
        <translation>加载扫描结果</translation>
    </message>
    <message>
        <source>Sweep results (*.jsonl *.json *.csv);;All files (*)</source>
        <translation>扫描结果 (*.jsonl *.json *.csv);;所有文件 (*)</translation>
    </message>
    <message>
        <source>Cannot load %1: %2</source>
        <translation>无法加载 %1：%2</translation>
    </message>
    <message>
        <source>Loaded plan %1 from the sweep</source>
        <translation>已从扫描加载方案 %1</translation>
    </message>
    <message>
        <source>No sweep loaded</source>
        <translation>未加载扫描</translation>
    </message>
    <message>
        <source>tokens/s</source>
        <translation>token/秒</translation>
    </message>
    <message>
        <source>million tokens/s</source>
        <translation>百万 token/秒</translation>
    </message>
    <message>
        <source>thousand tokens/s</source>
        <translation>千 token/秒</translation>
    </message>
    <message>
        <source>feasible plans</source>
        <translation>可行方案</translation>
    </message>
    <message>
        <source>infeasible plans</source>
        <translation>不可行方案</translation>
    </message>
    <message>
        <source>Pareto front</source>
        <translation>帕累托前沿</translation>
    </message>
    <message>
        <source>HBM capacity</source>
        <translation>HBM 容量</translation>
    </message>
    <message>
        <source>peak memory per GPU (GiB)</source>
        <translation>每 GPU 峰值内存（GiB）</translation>
    </message>
    <message>
        <source>Throughput against memory: %1 plans, %2 on the Pareto front</source>
        <translation>吞吐量与内存：%1 个方案，%2 个在帕累托前沿上</translation>
    </message>
    <message>
        <source>%1
%2, %3 per GPU, step %4%5</source>
        <translation>%1
%2，每 GPU %3，步时间 %4%5</translation>
    </message>
    <message>
        <source> (infeasible)</source>
        <translation>（不可行）</translation>
    </message>
    <message>
        <source>Run a sweep file</source>
        <translation>运行扫描文件</translation>
    </message>
    <message>
        <source>Sweep JSON (*.json)</source>
        <translation>扫描 JSON (*.json)</translation>
    </message>
    <message>
        <source>plan search</source>
        <translation>方案搜索</translation>
    </message>
    <message>
        <source>sweep</source>
        <translation>扫描</translation>
    </message>
    <message>
        <source>The %1 finished, but its results could not be read: %2</source>
        <translation>%1已完成，但无法读取其结果：%2</translation>
    </message>
    <message>
        <source>plan search (trainsim plan)</source>
        <translation>方案搜索（trainsim plan）</translation>
    </message>
    <message>
        <source>sweep (trainsim sweep)</source>
        <translation>扫描（trainsim sweep）</translation>
    </message>
    <message>
        <source>The %1 finished: %2 plans, %3 on the Pareto front.</source>
        <translation>%1已完成：%2 个方案，%3 个在帕累托前沿上。</translation>
    </message>
    <message>
        <source>Failed: %1</source>
        <translation>失败：%1</translation>
    </message>
    <message>
        <source>Cancelled.</source>
        <translation>已取消。</translation>
    </message>
    <message>
        <source>Sweep this scenario</source>
        <translation>扫描此场景</translation>
    </message>
    <message>
        <source>trainsim sweep over TP × PP × DP, micro-batch 1-8, ZeRO 0/1/3 and recompute, with the scenario being edited as the base</source>
        <translation>trainsim sweep：以当前编辑的场景为基础，扫描 TP × PP × DP、微批次 1-8、ZeRO 0/1/3 和重计算</translation>
    </message>
    <message>
        <source>Run sweep file…</source>
        <translation>运行扫描文件…</translation>
    </message>
    <message>
        <source>Search plans</source>
        <translation>搜索方案</translation>
    </message>
    <message>
        <source>trainsim plan: every plan of this model on this cluster, GPU count and global batch</source>
        <translation>trainsim plan：在此集群、GPU 数量和全局批次下搜索该模型的所有方案</translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation>取消</translation>
    </message>
    <message>
        <source>Load results…</source>
        <translation>加载结果…</translation>
    </message>
    <message>
        <source>Sweeping the plans around %1…</source>
        <translation>正在扫描 %1 附近的方案…</translation>
    </message>
    <message>
        <source>Running the sweep %1…</source>
        <translation>正在运行扫描 %1…</translation>
    </message>
    <message>
        <source>Searching the plans of %1 on %2 GPUs…</source>
        <translation>正在搜索 %1 在 %2 个 GPU 上的方案…</translation>
    </message>
    <message>
        <source>Run a sweep of this scenario, a sweep file or a plan search (each in a trainsim child process), or load results (trainsim sweep rows, trainsim plan --json, or CSV); click a point to load its plan.</source>
        <translation>运行此场景的扫描、扫描文件或方案搜索（各在一个 trainsim 子进程中），或加载结果（trainsim sweep 结果行、trainsim plan --json 或 CSV）；点击一个点即可加载其方案。</translation>
    </message>
    <message>
        <source>outside the constraints</source>
        <translation>不满足约束</translation>
    </message>
    <message>
        <source>No feasible plan among %1</source>
        <translation>%1 个方案中没有可行方案</translation>
    </message>
    <message>
        <source>%1: %2 plans: %3 feasible (%4 within the constraints, %5 on the Pareto front), %6 infeasible</source>
        <translation>%1：%2 个方案：%3 个可行（%4 个满足约束，%5 个在帕累托前沿上），%6 个不可行</translation>
    </message>
    <message>
        <source>; %1 infeasible plans lie outside the axes, which span the feasible ones</source>
        <translation>；%1 个不可行方案在坐标范围之外（坐标轴只覆盖可行方案）</translation>
    </message>
    <message>
        <source>; %1 lines skipped</source>
        <translation>；跳过 %1 行</translation>
    </message>
    <message>
        <source>Click a point to load that plan.</source>
        <translation>点击一个点即可加载该方案。</translation>
    </message>
</context>
<context>
    <name>trainsim::gui::TimelineView</name>
    <message>
        <source>Load Chrome/Perfetto trace</source>
        <translation>加载 Chrome/Perfetto 跟踪</translation>
    </message>
    <message>
        <source>Trace JSON (*.json);;All files (*)</source>
        <translation>跟踪 JSON (*.json);;所有文件 (*)</translation>
    </message>
    <message>
        <source>Cannot load %1: %2</source>
        <translation>无法加载 %1：%2</translation>
    </message>
    <message>
        <source>Zoom in</source>
        <translation>放大</translation>
    </message>
    <message>
        <source>Zoom out</source>
        <translation>缩小</translation>
    </message>
    <message>
        <source>Fit</source>
        <translation>适应窗口</translation>
    </message>
    <message>
        <source>Load trace…</source>
        <translation>加载跟踪…</translation>
    </message>
    <message>
        <source>Show estimate</source>
        <translation>显示估算</translation>
    </message>
    <message>
        <source>Mouse wheel zooms around the cursor; drag or Shift+wheel pans</source>
        <translation>滚轮以光标为中心缩放；拖动或 Shift+滚轮平移</translation>
    </message>
    <message>
        <source>%1 events on %2 lanes</source>
        <translation>%2 条泳道上共 %1 个事件</translation>
    </message>
    <message>
        <source>Trace: %1</source>
        <translation>跟踪：%1</translation>
    </message>
</context>
<context>
    <name>trainsim::gui::TopologyView</name>
    <message>
        <source>No topology: the scenario does not load</source>
        <translation>无拓扑：场景无法加载</translation>
    </message>
    <message>
        <source>%1: %2 nodes × %3 %4 = %5 GPUs, %6 network, %7 × %8 NICs per node</source>
        <translation>%1：%2 个节点 × %3 块 %4 = %5 个 GPU，%6 网络，每节点 %7 × %8 网卡</translation>
    </message>
    <message>
        <source>node %1</source>
        <translation>节点 %1</translation>
    </message>
    <message>
        <source>+%1 GPUs</source>
        <translation>另有 %1 个 GPU</translation>
    </message>
    <message>
        <source>NVSwitch / NVLink</source>
        <translation>NVSwitch / NVLink</translation>
    </message>
    <message>
        <source>… %1 more nodes</source>
        <translation>… 另有 %1 个节点</translation>
    </message>
    <message>
        <source>switch</source>
        <translation>交换机</translation>
    </message>
    <message>
        <source>rail %1 leaf</source>
        <translation>轨道 %1 叶交换机</translation>
    </message>
    <message>
        <source>leaf %1</source>
        <translation>叶交换机 %1</translation>
    </message>
    <message>
        <source>spine %1</source>
        <translation>脊交换机 %1</translation>
    </message>
    <message>
        <source>%1 network (routers not drawn)</source>
        <translation>%1 网络（未画出路由器）</translation>
    </message>
    <message>
        <source>NVLink per GPU: %1 — %2 per step (%3)</source>
        <translation>每 GPU NVLink：%1 — 每步 %2（%3）</translation>
    </message>
    <message>
        <source>no intra-node groups</source>
        <translation>无节点内通信组</translation>
    </message>
    <message>
        <source>NIC: %1 — %2 per GPU per step (%3)</source>
        <translation>网卡：%1 — 每 GPU 每步 %2（%3）</translation>
    </message>
    <message>
        <source>no inter-node groups</source>
        <translation>无跨节点通信组</translation>
    </message>
    <message>
        <source>Leaf–spine uplinks: %1 (NIC load × oversubscription %2)</source>
        <translation>叶–脊上行链路：%1（网卡负载 × 超额订阅 %2）</translation>
    </message>
    <message>
        <source>No placement: %1</source>
        <translation>无放置：%1</translation>
    </message>
    <message>
        <source>One GPU: no parallel groups.</source>
        <translation>单个 GPU：没有并行组。</translation>
    </message>
    <message>
        <source>Groups of GPU 0 (outlined in black), placed as the estimate and the simulation place them (%1):</source>
        <translation>GPU 0（黑框）所在的并行组，放置方式与估算和仿真相同（%1）：</translation>
    </message>
    <message>
        <source>across %1 nodes, over the NICs</source>
        <translation>跨 %1 个节点，经由网卡</translation>
    </message>
    <message>
        <source>inside one node, over NVLink</source>
        <translation>在一个节点内，经由 NVLink</translation>
    </message>
    <message>
        <source>PP: %1 stages on GPUs %2 — %3; %4 per GPU per step</source>
        <translation>PP：%1 个阶段位于 GPU %2 — %3；每 GPU 每步 %4</translation>
    </message>
    <message>
        <source>%1: %2 GPUs (%3) — %4; %5 per GPU per step</source>
        <translation>%1：%2 个 GPU（%3）— %4；每 GPU 每步 %5</translation>
    </message>
    <message>
        <source>Link utilisation simulated over the step (the simulation's hottest links; dotted grey: not among them).</source>
        <translation>仿真得到的整步链路利用率（仿真报告的最繁忙链路；灰色虚线：不在其中）。</translation>
    </message>
    <message>
        <source>Hottest: %1</source>
        <translation>最繁忙：%1</translation>
    </message>
    <message>
        <source>none reported</source>
        <translation>未报告</translation>
    </message>
    <message>
        <source>Estimate for comparison: NVLink %1, NIC %2 per GPU per step.</source>
        <translation>估算对照：每 GPU 每步 NVLink %1，网卡 %2。</translation>
    </message>
    <message>
        <source>Link utilisation estimated from the bytes each group moves per GPU per step over the step time (Simulate for per-link values).</source>
        <translation>链路利用率由每个组每 GPU 每步传输的字节数除以步时间估算（仿真可得每条链路的值）。</translation>
    </message>
</context>
<context>
    <name>trainsim::gui::ValidationView</name>
    <message>
        <source>n/a</source>
        <translation>不适用</translation>
    </message>
    <message>
        <source>%1 is not a trainsim validation report: %2</source>
        <translation>%1 不是 trainsim 验证报告：%2</translation>
    </message>
    <message>
        <source>metric</source>
        <translation>指标</translation>
    </message>
    <message>
        <source>predicted</source>
        <translation>预测</translation>
    </message>
    <message>
        <source>measured median</source>
        <translation>实测中位数</translation>
    </message>
    <message>
        <source>95% interval</source>
        <translation>95% 区间</translation>
    </message>
    <message>
        <source>error</source>
        <translation>误差</translation>
    </message>
    <message>
        <source>error 95% interval</source>
        <translation>误差 95% 区间</translation>
    </message>
    <message>
        <source>share of step</source>
        <translation>占步时间比例</translation>
    </message>
    <message>
        <source>limit</source>
        <translation>限值</translation>
    </message>
    <message>
        <source>No validation report loaded. Run `trainsim validate --backend cpu --report DIR` and open DIR here (File &gt; Open validation report); its timelines go to the Timeline view.</source>
        <translation>未加载验证报告。运行 `trainsim validate --backend cpu --report DIR`，然后在此打开 DIR（文件 &gt; 打开验证报告）；其时间线显示在“时间线”视图中。</translation>
    </message>
    <message>
        <source>&lt;b&gt;Verdict: %1&lt;/b&gt; (%2)</source>
        <translation>&lt;b&gt;结论：%1&lt;/b&gt;（%2）</translation>
    </message>
    <message>
        <source>%1 rank(s): TP %2 x PP %3 x DP %4, ZeRO-%5, %6, compression %7</source>
        <translation>%1 个进程：TP %2 x PP %3 x DP %4，ZeRO-%5，%6，压缩 %7</translation>
    </message>
    <message>
        <source>not judged</source>
        <translation>未评判</translation>
    </message>
    <message>
        <source>ok</source>
        <translation>通过</translation>
    </message>
    <message>
        <source>FAIL</source>
        <translation>未通过</translation>
    </message>
    <message>
        <source>not modelled</source>
        <translation>未建模</translation>
    </message>
    <message>
        <source>compute: %1</source>
        <translation>计算：%1</translation>
    </message>
</context>
</TS>