import { ToolsController } from './tools.controller';
import { Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { ApplyPatchTool } from './builtin/apply-patch.tool';
import { DelegateTool } from './builtin/delegate.tool';
import { EditFileTool } from './builtin/edit-file.tool';
import { GlobTool } from './builtin/glob.tool';
import { ListDirectoryTool } from './builtin/list-directory.tool';
import { ReadFileTool } from './builtin/read-file.tool';
import { RunCommandTool } from './builtin/run-command.tool';
import { SearchFilesTool } from './builtin/search-files.tool';
import { WriteFileTool } from './builtin/write-file.tool';
import { ToolRegistry } from './tool-registry.service';
import { ToolRunner } from './tool-runner.service';
import { CommandSandbox } from './exec/command-sandbox.service';
import { Workspaces } from './workspaces';
import { APP_CONFIG } from '../config/config.module';
import type { AppConfig } from '../config/app-config';
import { WorkspaceRecovery } from './workspace-recovery.service';
import { BackgroundCommands } from './exec/background-commands.service';
import { GetCommandOutputTool } from './builtin/get-command-output.tool';
import { CancelCommandTool } from './builtin/cancel-command.tool';
import { ServerProcess } from '../common/server-process.service';

/** The registry, the runner and the built-in tools. A new tool: one @AgentTool() class and one line below. */
@Module({
  imports: [DiscoveryModule],
  controllers: [ToolsController],
  providers: [
    ToolRegistry,
    ToolRunner,
    CommandSandbox,
    { provide: Workspaces, useFactory: (config: AppConfig) => new Workspaces(config), inject: [APP_CONFIG] },
    WorkspaceRecovery,
    ListDirectoryTool,
    ReadFileTool,
    SearchFilesTool,
    GlobTool,
    WriteFileTool,
    EditFileTool,
    ApplyPatchTool,
    RunCommandTool,
    DelegateTool,
    GetCommandOutputTool,
    CancelCommandTool,
    BackgroundCommands,
    // Provided here, the lowest module that needs it; DrivenRuns names its run leases with it too.
    ServerProcess,
  ],
  exports: [ToolRegistry, ToolRunner, Workspaces, BackgroundCommands, ServerProcess],
})
export class ToolsModule {}
